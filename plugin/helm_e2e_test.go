package plugin_test

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// A Helm chart whose Rollout promotes itself is red through --chart,
// through an Argo CD Helm source (--apps-root) and through kustomize
// helmCharts: (-k --enable-helm, the gate as its own helm command); the
// finding names the chart template. The same chart with a human promotion
// is green.
func TestE2EHelmAutoPromotion(t *testing.T) {
	const rule = "rollout-bluegreen-autopromotion"
	const tmpl = "examples/helm/charts/bluegreen/templates/rollout.yaml"
	// The chart's ServiceMonitor has no CRD here: the examples' config
	// allows it (schema.ignoreMissing).
	const cfg = "examples/helm/gate.yaml"
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"chart green", []string{"--chart", "examples/helm/charts/bluegreen", "-n", "shop"}, 0, nil},
		{"chart red", []string{"--chart", "examples/helm/charts/bluegreen", "-n", "shop", "--set", "bluegreen.autoPromotion=true"}, 1,
			[]string{rule, tmpl, "== --chart examples/helm/charts/bluegreen: "}},
		{"apps-root", []string{"-f", "examples/helm/apps/", "--apps-root", ".", "--repo-url", "https://github.com/kubectl-gate/kubectl-gate.git"}, 1,
			[]string{rule, tmpl, "shop-bluegreen-fast"}},
		{"kustomize helmCharts", []string{"-k", "examples/helm", "--enable-helm"}, 1, []string{rule, "charts/bluegreen/templates/rollout.yaml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := gate(t, "", append([]string{"check", "--config", cfg}, c.args...)...)
			if r.Code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, c.code, r.Stdout, r.Stderr)
			}
			for _, s := range c.want {
				if !strings.Contains(r.Stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.Stdout)
				}
			}
		})
	}
	// Only the fast Application is red: the prod one renders green.
	r := gate(t, "", "check", "--config", cfg, "-f", "examples/helm/apps/shop-bluegreen.yaml", "--apps-root", ".", "--repo-url", "https://github.com/kubectl-gate/kubectl-gate.git")
	if r.Code != 0 {
		t.Errorf("shop-bluegreen: exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A chart whose dependency only a remote repository holds is no verdict
// (exit 3), and the message names the dependency.
func TestE2EHelmRemoteDependency(t *testing.T) {
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: web\nversion: 1.0.0\ndependencies:\n- name: redis\n  version: 20.6.2\n  repository: oci://registry-1.docker.io/bitnamicharts\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
	})
	r := gate(t, "", "check", "--chart", dir)
	if r.Code != 3 {
		t.Fatalf("exit %d, want 3\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if out := r.Stdout + r.Stderr; !strings.Contains(out, "redis 20.6.2 from oci://registry-1.docker.io/bitnamicharts") {
		t.Errorf("output does not name the dependency:\n%s", out)
	}
}

// selftest on Helm inputs (issue 13 §5): on the chart's render through
// --chart and through an Argo CD Helm source, the rules' mutants and the
// Helm mutant — the chart value that turns autoPromotion on — are all
// stopped, in a table labelled with the input. With the rule turned down
// to a warning the Helm mutant gets through and selftest fails.
func TestE2ESelftestHelm(t *testing.T) {
	const cfg = "examples/helm/gate.yaml"
	cases := []struct {
		name  string
		args  []string
		label string
		row   string
	}{
		{"chart", []string{"--chart", "examples/helm/charts/bluegreen", "-n", "shop"},
			"== --chart examples/helm/charts/bluegreen: the baseline passes",
			"a Helm value that turns autoPromotion on (--set bluegreen.autoPromotion=true)"},
		{"apps-root", []string{"-f", "examples/helm/apps/shop-bluegreen.yaml", "--apps-root", ".", "--repo-url", "https://github.com/kubectl-gate/kubectl-gate.git"},
			"== Application argocd/shop-bluegreen spec.source from examples/helm/charts/bluegreen: the baseline passes",
			"a Helm value that turns autoPromotion on (helm.parameters bluegreen.autoPromotion=true)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := gate(t, "", append([]string{"selftest", "--config", cfg}, c.args...)...)
			if r.Code != 0 {
				t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, c.label) || !strings.Contains(r.Stderr, "selftest: PASSED") {
				t.Errorf("no table labelled %q, or no PASSED line:\n%s%s", c.label, r.Stdout, r.Stderr)
			}
			table := section(r.Stdout, c.label)
			for _, m := range []string{c.row, "flip autoPromotionEnabled to true and drop prePromotionAnalysis", "point previewService at activeService", "drop the digest, keep the tag"} {
				if row := rowOf(table, m); !strings.Contains(row, "FAIL") {
					t.Errorf("mutant %q not stopped: %q\n%s", m, row, r.Stdout)
				}
			}
			w := gate(t, "", append([]string{"selftest", "--config", cfg, "--rule", "rollout-bluegreen-autopromotion=warning"}, c.args...)...)
			if w.Code != 1 || !strings.Contains(rowOf(w.Stdout, c.row), "WARN  <-- MISSED") ||
				!strings.Contains(w.Stderr, "rule rollout-bluegreen-autopromotion, mutation \""+c.row+"\" got WARN") {
				t.Errorf("with the rule at warning: exit %d, want 1 and the Helm mutant missed\n%s%s", w.Code, w.Stdout, w.Stderr)
			}
		})
	}
}

// section is the table of out labelled label: from that line to the next
// "== " line.
func section(out, label string) string {
	i := strings.Index(out, label)
	if i < 0 {
		return ""
	}
	rest := out[i+len(label):]
	if j := strings.Index(rest, "\n== "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
