package render_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/render"
)

func configMap(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"
}

// A Directory source holds what Argo CD's repo-server applies from it
// (argo-cd v3.6 reposerver/repository/repository.go findManifests and
// getPotentiallyValidManifestFile; docs/user-guide/directory.md): hidden
// files and directories count, extensions are matched case-sensitively,
// include/exclude are gobwas globs whose * crosses /, files marked
// +argocd:skip-file-rendering and YAML that is not a manifest are skipped.
func TestRenderArgoDirectoryAsArgoCD(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"app/.hidden.yaml":             configMap("hidden"),
		"app/.dot/dotted.yaml":         configMap("dotted"),
		"app/.github/workflows/ci.yml": "on: push\njobs: {build: {runs-on: ubuntu-latest}}\n",
		"app/.argocd-source.yaml":      "directory:\n  jsonnet: {extVars: []}\n",
		"app/a.yaml":                   configMap("a"),
		"app/UPPER.YAML":               configMap("upper"),
		"app/lib.libsonnet":            "{}",
		"app/marked.yaml":              "# +argocd:skip-file-rendering\n" + configMap("marked"),
		"app/values.yaml":              "replicas: 3\nimage: {tag: v1}\n",
		"app/secret.yaml.sealed":       configMap("sealed"),
		"app/sub/c.yaml":               configMap("c"),
		"app/sub/.d/e.json":            `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "e"}}`,
		"lib/lib.libsonnet":            "{}",
		"lib/cm.yaml":                  configMap("lib"),
		"bad/broken.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\n",
		"bad/nokind.yaml":              "apiVersion: v1\nmetadata: {name: nokind}\ndata: {kind: x}\n",
	})
	// A symlink to a file counts for it; one to a directory is skipped
	// (Argo CD: "ignoring symlink … to non-regular file").
	if err := os.Symlink("sub/c.yaml", filepath.Join(dir, "app", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "app", "linkdir.yaml")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dir, directory string
		want                 string // object names in Argo CD's order, or "error: …"
	}{
		{"top level, hidden files too", "app", "", "hidden a c"},
		{"recurse enters hidden directories", "app", "recurse: true", "dotted hidden a c e c"},
		{"recurse as YAML 1.1 reads it", "app", "recurse: yes", "dotted hidden a c e c"},
		{"include crosses directories", "app", "{recurse: true, include: '*.json'}", "e"},
		{"include braces", "app", "{recurse: true, include: '{.dot/*,sub/*}'}", "dotted e c"},
		{"exclude before include", "app", "{recurse: true, include: '*.yaml', exclude: '{.*,**/.*,*link*}'}", "a c"},
		{"disableExtensionFilter reads other names", "app", "{disableExtensionFilter: true, include: '{*.yaml,*.sealed}'}", "hidden a c sealed"},
		{"disableExtensionFilter, upper case", "app", "{disableExtensionFilter: true, include: '*.YAML'}", "upper"},
		{"a .libsonnet file is not a manifest", "lib", "", "lib"},
		{"a broken manifest is an error", "bad", "{include: broken.yaml}", "error: broken.yaml"},
		{"a document without kind that looks like a manifest is an error", "bad", "{include: nokind.yaml}", "error: nokind.yaml"},
		{"a bad glob is an error", "app", "{include: '[a'}", "error: directory.include"},
		{"a bad boolean is an error", "app", "{recurse: maybe}", "error: directory.recurse"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := render.ArgoSource{Dir: filepath.Join(dir, c.dir)}
			if c.directory != "" {
				src.Directory = node(t, c.directory)
			}
			res, err := render.RenderArgo(src, render.Options{})
			if want, ok := strings.CutPrefix(c.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err %v, want one naming %q", err, want)
				}
				return
			}
			var skip *render.SkipError
			if errors.As(err, &skip) || err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range res.Resources {
				names = append(names, r.GetName())
			}
			if strings.Join(names, " ") != c.want {
				t.Errorf("rendered %v, want %s", names, c.want)
			}
		})
	}
}

// TestArgoDirectoryFilesBounded: a Directory source's files are read up to
// --max-input-bytes, as every file kustomize reads for -k and -f's files
// are: one over the cap is refused by name, not read whole (the cap was
// stream's default of 256 MiB whatever the flag said).
func TestArgoDirectoryFilesBounded(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"app/a.yaml":   configMap("a"),
		"app/big.yaml": strings.Repeat("# padding\n", 200) + configMap("big"),
	})
	_, err := render.RenderArgo(render.ArgoSource{Dir: filepath.Join(dir, "app")}, render.Options{MaxFileBytes: 1000})
	if err == nil || !strings.Contains(err.Error(), "big.yaml is larger than 1000 bytes") {
		t.Fatalf("err %v, want big.yaml refused over the cap", err)
	}
	res, err := render.RenderArgo(render.ArgoSource{Dir: filepath.Join(dir, "app")}, render.Options{MaxFileBytes: 4000})
	if err != nil || len(res.Resources) != 2 {
		t.Fatalf("under the cap: %v", err)
	}
}
