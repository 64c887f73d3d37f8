package render

import (
	"fmt"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
	"github.com/kubectl-gate/kubectl-gate/internal/workers"
)

// webFrom is the Deployment web as read from a file, with an image.
func webFrom(path, image string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, annotations: {config.kubernetes.io/path: ` + path + `}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "` + image + `"}]}
`
}

var web = webFrom("base/web.yaml", "ghcr.io/shop/web:1.4.2")

func TestDuplicate(t *testing.T) {
	other := webFrom("extra/web.yaml", "ghcr.io/shop/web:latest")
	copyOf := webFrom("copy/web.yaml", "ghcr.io/shop/web:1.4.2")
	ruletest.Run(t, Duplicate, []ruletest.Case{
		{Name: "one copy", Input: web},
		{Name: "a different second copy", Input: web + "---\n" + other, Want: []string{": the render already holds this object (from base/web.yaml); a different copy"}},
		{Name: "an identical copy from another file", Input: web + "---\n" + copyOf, Want: []string{": an identical copy"}},
		{Name: "another namespace", Input: web + "---\n" + `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: staging}
`},
		{Name: "another group, same kind and name", Input: web + "---\n" + `apiVersion: example.com/v1
kind: Deployment
metadata: {name: web, namespace: shop}
`},
		{Name: "a cluster-scoped object in two namespaces", Input: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader, namespace: default}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader, namespace: kube-system}\n",
			Want: []string{": the render already holds this object"}},
		{Name: "generateName only", Input: "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: migrate-}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {generateName: migrate-}\n"},
		{Name: "local config", Input: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, annotations: {config.kubernetes.io/local-config: \"true\"}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, annotations: {config.kubernetes.io/local-config: \"true\"}}\n"},
	})
	ruletest.Mutants(t, Duplicate, ruletest.Case{Input: web})
}

// TestDuplicatesAcrossRanges: a render larger than one worker's range
// (workers.RangeSize) gives the pairs a loop in order gives: each repeat with the
// first copy, in render order, a CRD's cluster scope applied wherever the
// CRD is, local config and nameless objects left out.
func TestDuplicatesAcrossRanges(t *testing.T) {
	var res []*yaml.RNode
	var want [][2]int
	add := func(doc string) int {
		res = append(res, yaml.MustParse(doc))
		return len(res) - 1
	}
	cm := func(ns, name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + ns + "}\n"
	}
	crd := func(group, kind, scope string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: " + kind + "s." + group + "}\nspec: {group: " + group + ", scope: " + scope + ", names: {kind: " + kind + "}}\n"
	}
	for i := range 3 * workers.RangeSize {
		switch i {
		// Two CRDs name Gadget, at the end of the first range and the
		// start of the third (which a worker may reach first): the later
		// decides.
		case workers.RangeSize - 1:
			add(crd("a.example.com", "Gadget", "Namespaced"))
		case 2 * workers.RangeSize:
			add(crd("b.example.com", "Gadget", "Cluster"))
		case workers.RangeSize - 2: // and Gizmo the other way round
			add(crd("a.example.com", "Gizmo", "Cluster"))
		case 2*workers.RangeSize + 1:
			add(crd("b.example.com", "Gizmo", "Namespaced"))
		default:
			add(cm("shop", fmt.Sprintf("cm-%d", i)))
		}
	}
	g1 := add("apiVersion: b.example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: a}\n")
	want = append(want, [2]int{g1, add("apiVersion: b.example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: b}\n")})
	add("apiVersion: b.example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: a}\n")
	add("apiVersion: b.example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: b}\n")
	// a repeat in a later range of one in the first
	want = append(want, [2]int{5, add(cm("shop", "cm-5"))})
	// the same name in another namespace is another object
	add(cm("other", "cm-6"))
	// a custom kind the render's CRD (after its objects) makes cluster-scoped
	w1 := add("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: a}\n")
	w2 := add("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: b}\n")
	want = append(want, [2]int{w1, w2})
	add("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec: {group: example.com, scope: Cluster, names: {kind: Widget, plural: widgets}}\n")
	// local config and generateName-only objects never count
	add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-7, namespace: shop, annotations: {config.kubernetes.io/local-config: \"true\"}}\n")
	add("apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-, namespace: shop}\n")
	add("apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-, namespace: shop}\n")
	// a third copy pairs with the first
	want = append(want, [2]int{5, add(cm("shop", "cm-5"))})
	index := map[*yaml.RNode]int{}
	for i, r := range res {
		index[r] = i
	}
	var got [][2]int
	for _, d := range Duplicates(res) {
		got = append(got, [2]int{index[d[0]], index[d[1]]})
	}
	if !slices.Equal(got, want) {
		t.Errorf("Duplicates = %v, want %v", got, want)
	}
}
