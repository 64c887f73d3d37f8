package plugin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestE2EExcludeApp: an Application or Flux object taken out of scope is
// neither rendered nor fetched, in the three cases where it once was (issue
// 22): a chart with a dependency only a remote repository holds, a remote
// kustomize base, a Flux HelmRelease from a HelmRepository. The report
// credits what excluded each; an exclusion that names nothing is exit 2.
func TestE2EExcludeApp(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote, namespace: web}\ndata: {a: b}\n")
	}))
	defer srv.Close()
	const repoURL = "https://github.com/example/platform.git"
	application := func(name, path string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: " + name + ", namespace: argocd}\nspec:\n  project: default\n" +
			"  source: {repoURL: " + repoURL + ", path: " + path + "}\n  destination: {server: https://kubernetes.default.svc, namespace: web}\n"
	}
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"apps/remote-base.yaml":            application("remote-base", "deploy/remote"),
		"apps/chart-dep.yaml":              application("chart-dep", "charts/web"),
		"deploy/remote/kustomization.yaml": "resources:\n  - " + srv.URL + "/cm.yaml\n",
		"charts/web/Chart.yaml":            "apiVersion: v2\nname: web\nversion: 0.1.0\ndependencies:\n  - {name: redis, version: 20.6.2, repository: " + srv.URL + "/charts}\n",
		"charts/web/templates/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n",
		"apps/podinfo.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: podinfo, namespace: flux-system}
spec: {url: ` + srv.URL + `/podinfo, interval: 10m}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: flux-system}
spec:
  interval: 10m
  chart:
    spec:
      chart: podinfo
      version: 6.7.0
      sourceRef: {kind: HelmRepository, name: podinfo}
`,
		"gate.yaml": "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: trusted}\nspec:\n  argocd:\n    exclude: [argocd/chart-dep]\n",
	})
	args := []string{"check", "-f", "apps/", "--apps-root", ".", "--repo-url", repoURL}
	r := runGate(t, dir, args...)
	if r.Code != 3 || hits.Load() == 0 {
		t.Fatalf("nothing excluded: exit %d after %d request(s), want 3 after fetching the remote base:\n%s%s", r.Code, hits.Load(), r.Stdout, r.Stderr)
	}
	hits.Store(0)
	r = runGate(t, dir, append(args, "--exclude-app", "remote-base", "--exclude-app", "argocd/chart-dep", "--exclude-app", "flux-system/podinfo")...)
	want := []string{
		"Application/remote-base (ns argocd)\n  " + `INFO [argocd-source-not-rendered]: excluded by --exclude-app "remote-base": 1 source(s) not rendered`,
		"Application/chart-dep (ns argocd)\n  " + `INFO [argocd-source-not-rendered]: excluded by --exclude-app "argocd/chart-dep"`,
		"HelmRelease/podinfo (ns flux-system)\n  " + `INFO [flux-not-rendered]: excluded by --exclude-app "flux-system/podinfo"`,
	}
	for _, w := range want {
		if !says(r.Stdout, w) {
			t.Errorf("missing %q", w)
		}
	}
	if r.Code != 0 || hits.Load() != 0 {
		t.Errorf("all three excluded: exit %d after %d request(s), want 0 and nothing fetched:\n%s%s", r.Code, hits.Load(), r.Stdout, r.Stderr)
	}
	// The trusted config's exclusion is credited to it.
	r = runGate(t, dir, append(args, "--config", filepath.Join(dir, "gate.yaml"), "--exclude-app", "remote-base", "--exclude-app", "podinfo")...)
	if r.Code != 0 || !says(r.Stdout, "Application/chart-dep (ns argocd)\n  "+`INFO [argocd-source-not-rendered]: excluded by spec.argocd.exclude "argocd/chart-dep"`) ||
		!strings.Contains(r.Stdout, `excluded by --exclude-app "podinfo"`) || hits.Load() != 0 {
		t.Errorf("config and flag: exit %d after %d request(s), want 0 crediting each:\n%s%s", r.Code, hits.Load(), r.Stdout, r.Stderr)
	}
	// A name that matches nothing is exit 2 naming it and the closest one.
	r = runGate(t, dir, append(args, "--exclude-app", "remote-base", "--exclude-app", "chart-dpe")...)
	if r.Code != 2 || !strings.Contains(r.Stderr, `--exclude-app: "chart-dpe" names no Application`) || !strings.Contains(r.Stderr, `did you mean "chart-dep"?`) {
		t.Errorf("misspelt exclusion: exit %d, want 2 naming it with a suggestion:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
