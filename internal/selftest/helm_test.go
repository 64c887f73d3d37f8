package selftest_test

import (
	"context"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/helm"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// chart writes a chart whose blue/green Rollout promotes itself when
// fastRelease is true; tracing is a false boolean that changes nothing the
// rule reads, and gated (when true) adds a prePromotionAnalysis with
// auto-promotion, which the rule accepts.
func chart(t *testing.T) string {
	return testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"values.yaml": "fastRelease: false\ngated: false\ntracing:\n  enabled: false\n",
		"templates/rollout.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
  labels: {tracing: {{ .Values.tracing.enabled | quote }}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "ghcr.io/example/web:1.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}]}
  strategy:
    blueGreen:
      activeService: web
      previewService: web-preview
      autoPromotionEnabled: {{ or .Values.fastRelease .Values.gated }}
{{- if .Values.gated }}
      prePromotionAnalysis: {templates: [{templateName: smoke}]}
{{- end }}
`,
	})
}

func renderer(dir string) selftest.RenderWith {
	return func(ctx context.Context, path string) ([]*yaml.RNode, error) {
		return helm.Render(ctx, dir, dir, helm.Options{Set: []string{path + "=true"}})
	}
}

// TestFindAutoPromotionValue: the value that turns the Rollout's
// autoPromotionEnabled on is found among the chart's false booleans; one
// that only adds an analysis with it, or changes nothing, is not; and the
// gate stops the mutant's render unless the rule is turned down.
func TestFindAutoPromotionValue(t *testing.T) {
	ctx := context.Background()
	dir := chart(t)
	base, err := helm.Render(ctx, dir, dir, helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	candidates, err := helm.FalseBools(dir, helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"fastRelease", "gated", "tracing.enabled"}; !slices.Equal(candidates, want) {
		t.Fatalf("candidates %v, want %v", candidates, want)
	}
	path, mutated, err := selftest.FindAutoPromotionValue(ctx, base, candidates, renderer(dir))
	if err != nil || path != "fastRelease" {
		t.Fatalf("found %q (err %v), want fastRelease", path, err)
	}
	// Without fastRelease, no value makes the Rollout promote itself untested.
	if p, _, err := selftest.FindAutoPromotionValue(ctx, base, []string{"gated", "tracing.enabled"}, renderer(dir)); err != nil || p != "" {
		t.Errorf("found %q (err %v) without fastRelease, want none", p, err)
	}
	// A baseline that promotes itself already has nothing to flip.
	if p, _, _ := selftest.FindAutoPromotionValue(ctx, mutated, candidates, renderer(dir)); p != "" {
		t.Errorf("found %q on a render that promotes itself already", p)
	}
	for sev, want := range map[string]string{string(finding.SeverityError): "fail", string(finding.SeverityWarning): "warn", finding.Off: "pass"} {
		cfg := config.Default()
		cfg.Rules[selftest.HelmAutoPromotionRule] = sev
		row, err := selftest.RunRender(ctx, selftest.HelmAutoPromotionRule, "m", mutated, base, gate.Options{Config: cfg}, gate.Deps{}, false)
		if err != nil || row.Got != want {
			t.Errorf("rule at %s: row %+v (err %v), want %s", sev, row, err, want)
		}
	}
}
