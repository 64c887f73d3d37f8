package manifest_test

import (
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/workers"
)

// TestCountAcrossRanges: a render larger than one worker's range is
// counted as one loop counts it (render-empty, render-count and
// argocd-source-empty read the count): local config and kustomize's own
// objects, in every range, do not count.
func TestCountAcrossRanges(t *testing.T) {
	for _, n := range []int{0, 1, workers.RangeSize, 3*workers.RangeSize + 7} {
		var res []*yaml.RNode
		want := 0
		for i := range n {
			switch {
			case i%97 == 3:
				res = append(res, yaml.MustParse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local-%d\n  annotations: {config.kubernetes.io/local-config: \"true\"}\n", i)))
			case i%211 == 5:
				res = append(res, yaml.MustParse("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"))
			default:
				res = append(res, yaml.MustParse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\n", i)))
				want++
			}
		}
		if got := manifest.Count(res); got != want {
			t.Errorf("%d objects: Count = %d, want %d", n, got, want)
		}
	}
}
