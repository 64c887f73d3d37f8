package pipeline

import (
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/workers"
)

// TestLeafAcrossRanges: a render larger than one worker's range holds an
// Application or a GitRepository wherever it is, in the last range or the
// middle one, and is a leaf (checked and released at once) only without
// any: a render that deploys sources taken for a leaf would be released
// before its Applications are expanded.
func TestLeafAcrossRanges(t *testing.T) {
	n := 3*workers.RangeSize + 5
	render := func(at int, doc string) []*yaml.RNode {
		var res []*yaml.RNode
		for i := range n {
			if i == at {
				res = append(res, yaml.MustParse(doc))
				continue
			}
			res = append(res, yaml.MustParse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: shop}\n", i)))
		}
		return res
	}
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  source: {repoURL: 'https://github.com/example/deploy.git', path: web}\n  destination: {server: 'https://kubernetes.default.svc', namespace: shop}\n"
	repo := "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: deploy, namespace: flux-system}\nspec: {url: 'https://github.com/example/deploy.git', interval: 1m}\n"
	for _, tc := range []struct {
		name string
		res  []*yaml.RNode
		want bool
	}{
		{"ConfigMaps only", render(-1, ""), true},
		{"an Application last", render(n-1, app), false},
		{"a GitRepository in the middle range", render(workers.RangeSize+3, repo), false},
		{"an Application first", render(0, app), false},
		{"one Application alone", []*yaml.RNode{yaml.MustParse(app)}, false},
		{"one ConfigMap alone", render(-1, "")[:1], true},
	} {
		if got := leaf(tc.res); got != tc.want {
			t.Errorf("%s: leaf = %v, want %v", tc.name, got, tc.want)
		}
	}
}
