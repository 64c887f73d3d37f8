package plugin_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestE2EHelmCapabilitiesFollowKubernetesVersion (issue 23 §5): a chart
// rendered through kustomize helmCharts: (the gate as the helm command) and
// through an Argo CD Helm source is rendered for the Kubernetes version it
// is checked against, as --chart is; a kubeVersion set on the helmCharts:
// entry or on the Application's helm: wins. The chart writes a label value
// the API server refuses only when rendered for a cluster before 1.30.
func TestE2EHelmCapabilitiesFollowKubernetesVersion(t *testing.T) {
	const repo = "https://example.com/acme/deploy.git"
	chart := versionsTemplate
	app := func(name, helm string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: ` + name + `
  namespace: argocd
spec:
  project: default
  source:
    repoURL: ` + repo + `
    path: charts/versions
    targetRevision: HEAD
    helm: ` + helm + `
  destination:
    server: https://kubernetes.default.svc
    namespace: default
`
	}
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"charts/versions/Chart.yaml":               "apiVersion: v2\nname: versions\nversion: 0.1.0\n",
		"charts/versions/templates/cm.yaml":        chart,
		"charts/versions/values.yaml":              "{}\n",
		"pinned/charts/versions/Chart.yaml":        "apiVersion: v2\nname: versions\nversion: 0.1.0\n",
		"pinned/charts/versions/templates/cm.yaml": chart,
		"pinned/charts/versions/values.yaml":       "{}\n",
		"kustomization.yaml":                       "helmCharts:\n- name: versions\n  releaseName: versions\n  namespace: default\nhelmGlobals:\n  chartHome: charts\n",
		"pinned/kustomization.yaml":                "helmCharts:\n- name: versions\n  releaseName: versions\n  namespace: default\n  kubeVersion: v1.31.0\nhelmGlobals:\n  chartHome: charts\n",
		"apps/versions.yaml":                       app("versions", "{}"),
		"apps/versions-pinned.yaml":                app("versions-pinned", "{kubeVersion: v1.31.0}"),
	})
	apps := func(file string) []string {
		return []string{"-f", filepath.Join(dir, "apps", file), "--apps-root", dir, "--repo-url", repo}
	}
	const old = `metadata.labels: Invalid value: "old cluster"`
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"helmCharts for 1.29", []string{"-k", dir, "--enable-helm", "--kubernetes-version", "1.29"}, 1, old},
		{"helmCharts for 1.34", []string{"-k", dir, "--enable-helm", "--kubernetes-version", "1.34"}, 0, "PASS"},
		{"helmCharts default", []string{"-k", dir, "--enable-helm"}, 0, "PASS"},
		{"helmCharts entry's kubeVersion wins", []string{"-k", filepath.Join(dir, "pinned"), "--enable-helm", "--kubernetes-version", "1.29"}, 0, "PASS"},
		{"Argo Helm for 1.29", append(apps("versions.yaml"), "--kubernetes-version", "1.29"), 1, old},
		{"Argo Helm for 1.34", append(apps("versions.yaml"), "--kubernetes-version", "1.34"), 0, "PASS"},
		{"Argo helm.kubeVersion wins", append(apps("versions-pinned.yaml"), "--kubernetes-version", "1.29"), 0, "PASS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gate(t, "", append([]string{"check"}, tc.args...)...)
			if r.Code != tc.code || !strings.Contains(r.Stdout+r.Stderr, tc.says) {
				t.Errorf("exit %d, want %d and %q\n%s%s", r.Code, tc.code, tc.says, r.Stdout, r.Stderr)
			}
		})
	}
}
