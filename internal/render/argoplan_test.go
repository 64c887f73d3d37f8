package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const planApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  sources:
  - {repoURL: https://github.com/example/shop.git, path: overlays/prod, kustomize: {namePrefix: a-}}
  - {repoURL: https://github.com/example/other.git, path: deploy}
  - {repoURL: https://charts.example.com, chart: redis, targetRevision: 18.0.0}
  - {repoURL: https://github.com/example/shop.git, path: ../../etc}
  destination: {namespace: shop}
`

// TestPlanSources: which of an Application's sources the gate renders from
// a checkout of https://github.com/example/shop.git, and from where.
func TestPlanSources(t *testing.T) {
	root := t.TempDir()
	app := parseStream(t, planApp)[0]
	srcs := argo.Sources(app)
	remotes := render.CheckoutURLs(root, []string{"git@github.com:example/shop.git"})
	skips := make([]string, len(srcs))
	for i, s := range srcs {
		skips[i] = render.SkipSource(root, remotes, s)
	}
	if skips[0] != "" || skips[3] != "" {
		t.Errorf("sources of the checkout are skipped: %q", skips)
	}
	if !strings.Contains(skips[1], "repository https://github.com/example/other.git is not the one checked out") {
		t.Errorf("another repository: %q", skips[1])
	}
	if !strings.Contains(skips[2], "Helm chart redis from https://charts.example.com") {
		t.Errorf("a Helm chart: %q", skips[2])
	}
	spec, err := render.LocalSource(root, app, srcs[0])
	if err != nil || spec.Dir != filepath.Join(root, "overlays", "prod") || spec.App != "shop" || spec.Kustomize == nil {
		t.Errorf("LocalSource = %+v, %v", spec, err)
	}
	if _, err := render.LocalSource(root, app, srcs[3]); err == nil || !strings.Contains(err.Error(), `spec.sources[3].path "../../etc" leaves the repository`) {
		t.Errorf("a path out of the checkout: %v", err)
	}
}

// TestSourceKey: two Applications with the same source and overrides share
// a render; other overrides, or a parameter file naming one of them, do not.
func TestSourceKey(t *testing.T) {
	root := t.TempDir()
	apps := parseStream(t, planApp+"---\n"+strings.Replace(planApp, "name: shop,", "name: shop-2,", 1)+"---\n"+strings.Replace(planApp, "namePrefix: a-", "namePrefix: b-", 1))
	key := func(i int) string {
		spec, err := render.LocalSource(root, apps[i], argo.Sources(apps[i])[0])
		if err != nil {
			t.Fatal(err)
		}
		return render.SourceKey(spec)
	}
	if key(0) != key(1) {
		t.Error("the same source and overrides render twice")
	}
	if key(0) == key(2) {
		t.Error("other kustomize overrides share a render")
	}
	dir := filepath.Join(root, "overlays", "prod")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".argocd-source-shop.yaml"), []byte("kustomize: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if key(0) == key(1) {
		t.Error("a parameter file for one Application is shared with another")
	}
}

func parseStream(t *testing.T, text string) []*yaml.RNode {
	t.Helper()
	nodes, err := render.Parse([]byte(text), "apps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}
