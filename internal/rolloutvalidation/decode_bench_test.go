package rolloutvalidation

import (
	"bytes"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
)

// benchRollouts are the Rollouts of a generated bench render.
func benchRollouts(b *testing.B) []*yaml.RNode {
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 1000, Images: 40, Registry: "ghcr.io", Pinned: true}); err != nil {
		b.Fatal(err)
	}
	objs, err := kio.FromBytes(buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	var out []*yaml.RNode
	for _, o := range objs {
		if o.GetKind() == "Rollout" {
			out = append(out, o)
		}
	}
	return out
}

// BenchmarkDecodeRollout: a Rollout of the bench render decoded from the
// node tree (decodeJSON) and through JSON (decodeViaJSON).
func BenchmarkDecodeRollout(b *testing.B) {
	ros := benchRollouts(b)
	for _, bc := range []struct {
		name   string
		decode func(*yaml.RNode, any) error
	}{{"node", decodeJSON}, {"json", decodeViaJSON}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := bc.decode(ros[i%len(ros)], &v1alpha1.Rollout{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
