package images

import (
	"bytes"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
)

// BenchmarkCollect: every image of a 1,000-object bench render, the walk
// check and pin share.
func BenchmarkCollect(b *testing.B) {
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 1000, Images: 40, Registry: "ghcr.io", Pinned: true}); err != nil {
		b.Fatal(err)
	}
	objs, err := kio.FromBytes(buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(Collect(objs, nil, nil)) == 0 {
			b.Fatal("no images")
		}
	}
}
