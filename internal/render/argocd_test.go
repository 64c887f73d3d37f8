package render_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// writeTree writes files (path → content) under a temp dir that is a
// repository (it holds .git): the root a render is bounded to.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return testutil.WriteFiles(t, dir, files)
}

const webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: ghcr.io/shop/web:latest}]
`

// shop is a base and a prod overlay that sets a namespace, a prefix and a
// pinned image.
func shop(t *testing.T, extra map[string]string) string {
	files := map[string]string{
		"base/kustomization.yaml": "resources: [web.yaml]\n",
		"base/web.yaml":           webDeployment,
		"prod/kustomization.yaml": "resources: [../base]\nnamespace: shop-prod\nnamePrefix: prod-\nimages:\n- name: ghcr.io/shop/web\n  newTag: \"1.4.2\"\n  digest: sha256:" + strings.Repeat("a", 64) + "\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	return writeTree(t, files)
}

func node(t *testing.T, text string) *yaml.RNode {
	t.Helper()
	n, err := yaml.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func only(t *testing.T, res *render.Result, kind string) *yaml.RNode {
	t.Helper()
	for _, r := range res.Resources {
		if r.GetKind() == kind {
			return r
		}
	}
	t.Fatalf("no %s in the render", kind)
	return nil
}

func get(t *testing.T, r *yaml.RNode, path ...string) string {
	t.Helper()
	n, err := r.Pipe(yaml.Lookup(path...))
	if err != nil || n == nil {
		return ""
	}
	return yaml.GetValue(n)
}

func TestRenderArgoKustomizeOverrides(t *testing.T) {
	dir := shop(t, nil)
	src := render.ArgoSource{Dir: filepath.Join(dir, "prod"), App: "shop-preview", Kustomize: node(t, `
namespace: shop-preview
namePrefix: preview-
images: [ghcr.io/shop/web:1.5.0]
commonLabels: {app.kubernetes.io/instance: preview}
replicas: [{name: web, count: "3"}]
`)}
	res, err := render.RenderArgo(src, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := only(t, res, "Deployment")
	for _, c := range []struct{ got, want, why string }{
		{d.GetNamespace(), "shop-preview", "the Application's namespace replaces the overlay's"},
		{d.GetName(), "preview-web", "`kustomize edit set nameprefix` replaces the overlay's prefix"},
		{get(t, d, "spec", "template", "spec", "containers", "[name=web]", "image"), "ghcr.io/shop/web:1.5.0", "`kustomize edit set image` replaces the overlay's entry, digest and all"},
		{d.GetLabels()["app.kubernetes.io/instance"], "preview", "commonLabels reach metadata"},
		{get(t, d, "spec", "selector", "matchLabels", "app.kubernetes.io/instance"), "preview", "commonLabels reach selectors"},
		{get(t, d, "spec", "replicas"), "3", "replicas"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.why, c.got, c.want)
		}
	}
	// The source on disk is untouched.
	data, _ := os.ReadFile(filepath.Join(dir, "prod", "kustomization.yaml"))
	if strings.Contains(string(data), "preview") {
		t.Error("the overrides were written to disk")
	}
}

func TestRenderArgoKustomizeLabels(t *testing.T) {
	dir := shop(t, map[string]string{"prod/kustomization.yaml": "resources: [../base]\ncommonLabels: {team: shop}\n"})
	conflict := render.ArgoSource{Dir: filepath.Join(dir, "prod"), Kustomize: node(t, "commonLabels: {team: other}\n")}
	if _, err := render.RenderArgo(conflict, render.Options{}); err == nil || !strings.Contains(err.Error(), "label team already in kustomization file") {
		t.Fatalf("a label the overlay sets, without force: err %v, want kustomize edit's error", err)
	}
	conflict.Kustomize = node(t, "commonLabels: {owner: shop}\nlabelWithoutSelector: true\n")
	res, err := render.RenderArgo(conflict, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := only(t, res, "Deployment")
	if d.GetLabels()["owner"] != "shop" || get(t, d, "spec", "selector", "matchLabels", "owner") != "" {
		t.Errorf("labelWithoutSelector: labels %v, selector owner %q", d.GetLabels(), get(t, d, "spec", "selector", "matchLabels", "owner"))
	}
}

// Argo CD's own kustomize test data: an app that adds a component from
// outside its directory, with a namespace override.
func TestRenderArgoComponentsCorpus(t *testing.T) {
	root := filepath.Join(testutil.Corpus(t), "argoproj__argo-cd/util/kustomize/testdata/kustomization_yaml_components_monorepo")
	app := filepath.Join(root, "envs/inseng-pdx-egert-sandbox/namespaces/inst-system/apps/hello-world")
	src := render.ArgoSource{Dir: app, App: "hello-world", Kustomize: node(t, `
namespace: inst-system
components: [../../../../../../kustomize/components/all, ../../../../../../kustomize/components/missing]
ignoreMissingComponents: true
`)}
	res, err := render.RenderArgo(src, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 3 {
		t.Fatalf("%d objects, want 3 (ServiceAccount, Service, Deployment)", len(res.Resources))
	}
	d := only(t, res, "Deployment")
	if d.GetNamespace() != "inst-system" || d.GetName() != "hello-world-kustomize" || d.GetLabels()["app.kubernetes.io/owner"] != "fire-team" {
		t.Errorf("got %s/%s labels %v", d.GetNamespace(), d.GetName(), d.GetLabels())
	}
	if get(t, d, "spec", "template", "spec", "tolerations", "[key=my-special-toleration]", "operator") != "Exists" {
		t.Error("the component's patch did not apply")
	}
	// The hidden .argo-cd.yaml beside it is Argo CD config, not a manifest.
	src.Kustomize = node(t, "components: [../../../../../../kustomize/components/missing]\n")
	if _, err := render.RenderArgo(src, render.Options{}); err == nil {
		t.Error("a missing component without ignoreMissingComponents must fail the render")
	}
}

// argocd-image-updater writes .argocd-source-<app>.yaml; Argo CD merges it
// into the source before it renders, so the gate must too.
func TestRenderArgoParameterFiles(t *testing.T) {
	dir := shop(t, map[string]string{
		"prod/.argocd-source.yaml":           "kustomize:\n  namespace: from-file\n",
		"prod/.argocd-source-shop-prod.yaml": "kustomize:\n  images: [ghcr.io/shop/web:2.0.0]\n",
	})
	res, err := render.RenderArgo(render.ArgoSource{Dir: filepath.Join(dir, "prod"), App: "shop-prod", Kustomize: node(t, "namePrefix: app-\n")}, render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := only(t, res, "Deployment")
	image := get(t, d, "spec", "template", "spec", "containers", "[name=web]", "image")
	if d.GetNamespace() != "from-file" || d.GetName() != "app-web" || image != "ghcr.io/shop/web:2.0.0" {
		t.Errorf("got %s/%s %s, want from-file/app-web ghcr.io/shop/web:2.0.0", d.GetNamespace(), d.GetName(), image)
	}
}

func TestRenderArgoDirectory(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"app/a.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"app/b.json":           `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}`,
		"app/notes.txt":        "not a manifest",
		"app/.hidden.yaml":     "kustomize: {namespace: x}\n",
		"app/sub/c.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"app/sub/skip.yml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: skip}\n",
		"app/.git/x.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: git}\n",
		"jsonnet/main.jsonnet": "{}",
		"chart/Chart.yaml":     "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/values.yaml":    "replicas: 1\n",
	})
	cases := []struct {
		name, dir, directory string
		want                 string // object names, or the skip reason
	}{
		{"top level only", "app", "", "a b"},
		// Argo CD walks hidden directories too, .git among them.
		{"recurse", "app", "recurse: true", "git a b c skip"},
		{"include and exclude", "app", "{recurse: true, include: '{*.yaml,*.json}', exclude: 'sub/skip*'}", "git a b c"},
		{"jsonnet is not evaluated", "jsonnet", "", "skip: jsonnet"},
		{"a Chart.yaml is Helm", "chart", "", ""}, // a chart without templates renders nothing
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := render.ArgoSource{Dir: filepath.Join(dir, c.dir)}
			if c.directory != "" {
				src.Directory = node(t, c.directory)
			}
			res, err := render.RenderArgo(src, render.Options{})
			var skip *render.SkipError
			if errors.As(err, &skip) {
				if !strings.HasPrefix(c.want, "skip: ") || !strings.Contains(skip.Reason, strings.TrimPrefix(c.want, "skip: ")) {
					t.Fatalf("skipped (%s), want %s", skip.Reason, c.want)
				}
				return
			}
			if err != nil {
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

func TestRenderArgoSourceTypes(t *testing.T) {
	dir := shop(t, map[string]string{
		"typed/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata: {name: typed}\nresources: [web.yaml]\n",
		"typed/web.yaml":           webDeployment,
	})
	prod := filepath.Join(dir, "prod")
	cases := []struct {
		name string
		src  render.ArgoSource
		want string // "ok", "skip" or an error substring
	}{
		{"explicit helm on a kustomization", render.ArgoSource{Dir: prod, Helm: true}, "not a Helm chart"},
		{"a plugin", render.ArgoSource{Dir: prod, Plugin: true}, "skip"},
		{"two types", render.ArgoSource{Dir: prod, Helm: true, Kustomize: node(t, "namePrefix: x-\n")}, "names several types (Kustomize, Helm)"},
		// The named type wins: the kustomization file is read as a
		// manifest. Argo CD skips one that does not look like a manifest
		// (no apiVersion:, kind:, metadata:) and applies the files beside
		// it raw; one that does is applied, and fails the sync.
		{"explicit directory over a kustomization", render.ArgoSource{Dir: filepath.Join(dir, "base"), Directory: node(t, "recurse: false\n")}, "ok"},
		{"explicit directory over a typed kustomization", render.ArgoSource{Dir: filepath.Join(dir, "typed"), Directory: node(t, "recurse: false\n")}, "kustomize configuration"},
		{"discovered kustomization", render.ArgoSource{Dir: prod}, "ok"},
		{"missing", render.ArgoSource{Dir: filepath.Join(dir, "nope")}, "no such file or directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := render.RenderArgo(c.src, render.Options{})
			var skip *render.SkipError
			switch {
			case c.want == "ok" && err != nil, c.want == "skip" && !errors.As(err, &skip):
				t.Fatalf("err %v, want %s", err, c.want)
			case c.want != "ok" && c.want != "skip" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

// A checkout holding a symlink that leaves it is not rendered, as Argo CD
// refuses it: an absolute link, a relative link out of the root (even
// when it sits outside the source path: Argo CD checks the repository).
// Links inside the checkout render, and read what they point at.
func TestRenderArgoOutOfBoundsSymlinks(t *testing.T) {
	outside := writeTree(t, map[string]string{"secret.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: outside}\n"})
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: inside}\n"
	cases := []struct {
		name, link, target, bad string
	}{
		{"relative link inside", "app/b.yaml", "../common/cm.yaml", ""},
		{"absolute link", "app/b.yaml", filepath.Join(outside, "secret.yaml"), "app/b.yaml"},
		{"relative link out of the root", "app/b.yaml", "../../" + filepath.Base(outside) + "/secret.yaml", "app/b.yaml"},
		{"link out of the root beside the source", "other/x", "../..", "other/x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(filepath.Dir(outside), "repo-"+strings.ReplaceAll(c.name, " ", "-"))
			testutil.WriteFiles(t, root, map[string]string{"app/a.yaml": cm, "common/cm.yaml": cm, "other/keep": ""})
			t.Cleanup(func() { _ = os.RemoveAll(root) })
			if err := os.Symlink(c.target, filepath.Join(root, filepath.FromSlash(c.link))); err != nil {
				t.Fatal(err)
			}
			res, err := render.RenderArgo(render.ArgoSource{Dir: filepath.Join(root, "app"), Root: root}, render.Options{})
			var oob *render.OutOfBoundsSymlinkError
			if c.bad == "" {
				if err != nil || len(res.Resources) != 2 {
					t.Fatalf("err %v, resources %d; want both inside files rendered", err, len(res.Resources))
				}
				return
			}
			if !errors.As(err, &oob) || !strings.Contains(err.Error(), filepath.FromSlash(c.bad)) {
				t.Fatalf("err = %v (rendered %v), want an out-of-bounds symlink error naming %s", err, res, c.bad)
			}
		})
	}
}
