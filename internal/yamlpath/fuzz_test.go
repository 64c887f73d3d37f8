package yamlpath

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzLineOf feeds LineOf an arbitrary document (a pull request writes the
// keys it walks) and an arbitrary field path (seeds: the paths rules
// write): it never panics, and the line it gives is one of the document's
// own node lines, or the document's first.
func FuzzLineOf(f *testing.F) {
	doc := "kind: Deployment\nmetadata:\n  name: web\n  annotations: {a.b: c, a: d}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n"
	for _, p := range []string{"", "spec.template.spec.containers[0].image", "spec.template.spec.containers.0", "metadata.annotations.a.b",
		"metadata.annotations[a.b]", "spec[", "]]..[0]", "spec.template.spec.containers[-1]", "spec.x.y"} {
		f.Add(doc, p)
	}
	f.Add("? a.b.c\n: {d: [1, {e: f}]}\n", "a.b.c.d[1].e")
	f.Fuzz(func(t *testing.T, doc, path string) {
		n, err := yaml.Parse(doc)
		if err != nil {
			return
		}
		lines := map[int]bool{n.YNode().Line: true}
		var walk func(*yaml.Node)
		walk = func(m *yaml.Node) {
			lines[m.Line] = true
			for _, c := range m.Content {
				walk(c)
			}
		}
		walk(n.YNode())
		if got := LineOf(n.YNode(), path); !lines[got] {
			t.Fatalf("LineOf(%q) = %d, not a line of the document's nodes\n%s", path, got, strings.TrimSpace(doc))
		}
	})
}
