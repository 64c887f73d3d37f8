package appset

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzExpand feeds ApplicationSets (untrusted input from the checkout) to
// Expand over a small checkout: it must return Applications or an error,
// never panic. Seeds: testdata/*.yaml.
func FuzzExpand(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	root := f.TempDir()
	for name, body := range map[string]string{
		"apps/web/kustomization.yaml": "resources: []\n",
		"clusters/prod/config.json":   `{"cluster": {"name": "prod"}, "namespace": "shop-prod"}`,
		"clusters/list.yaml":          "- {cluster: eu}\n- 3\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, doc string) {
		n, err := yaml.Parse(doc)
		if err != nil || n.YNode().Kind != yaml.MappingNode {
			return
		}
		gens, err := Expand(n, Options{Root: root})
		for _, g := range gens {
			if err == nil && g.App.GetName() == "" {
				t.Fatalf("a generated Application without a name: %s", g.Element)
			}
		}
	})
}
