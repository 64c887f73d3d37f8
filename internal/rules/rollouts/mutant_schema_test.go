package rollouts_test

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/rollouts"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/schema"
)

// TestAutoPromotionMutantsAreSchemaValid: every mutant of
// rollout-bluegreen-autopromotion is a Rollout the API server would accept,
// whether the field was false or absent, so selftest proves this rule and
// not the schema rule (issue 22: the flip of an absent field wrote a value
// the schema rejected).
func TestAutoPromotionMutantsAreSchemaValid(t *testing.T) {
	const pre = "prePromotionAnalysis:\n  templates: [{templateName: smoke}]\n"
	for name, strategy := range map[string]string{
		"field false":  "autoPromotionEnabled: false\n",
		"field absent": pre,
		"both":         "autoPromotionEnabled: false\n" + pre,
	} {
		input := rollout("blueGreen:\n  activeService: web-active\n  previewService: web-preview\n" + indent(strategy, 2))
		if got := ruletest.Check(t, schema.Schema, ruletest.Case{Input: input}); len(got) != 0 {
			t.Fatalf("%s: the baseline is schema-invalid:\n%s", name, ruletest.FormatAll(got))
		}
		for _, m := range rollouts.BlueGreenAutoPromotion.Mutants {
			s := &rules.Subject{Resources: ruletest.Parse(t, input), Config: config.Default()}
			if !m.Apply(s) {
				t.Fatalf("%s: mutant %q does not apply", name, m.Name)
			}
			if got := ruletest.CheckResources(schema.Schema, s.Resources, nil, nil); len(got) != 0 {
				t.Errorf("%s: mutant %q is schema-invalid:\n%s", name, m.Name, ruletest.FormatAll(got))
			}
			if got := ruletest.CheckResources(rollouts.BlueGreenAutoPromotion, s.Resources, nil, nil); len(got) == 0 {
				t.Errorf("%s: mutant %q does not fire the rule", name, m.Name)
			}
		}
	}
}

// TestAnalysisRefMutantOnAStandaloneExperiment: a render whose only
// analysis references are a standalone Experiment's gets a mutant that
// misspells one, and the rule catches it (selftest said N/A there, found
// on argoproj/rollouts-demo's examples/experiment).
func TestAnalysisRefMutantOnAStandaloneExperiment(t *testing.T) {
	const input = `apiVersion: argoproj.io/v1alpha1
kind: Experiment
metadata: {name: demo, namespace: shop}
spec:
  duration: 15m
  templates:
  - name: purple
    replicas: 1
    selector: {matchLabels: {app: demo}}
    template:
      metadata: {labels: {app: demo}}
      spec: {containers: [{name: c, image: registry.example.com/demo:1}]}
  analyses:
  - name: purple
    templateName: http-benchmark
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: http-benchmark, namespace: shop}
spec:
  metrics:
  - name: ok
    provider: {job: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: registry.example.com/bench:1}]}}}}}
`
	if got := ruletest.Check(t, rollouts.AnalysisRef, ruletest.Case{Input: input}); len(got) != 0 {
		t.Fatalf("the baseline fires:\n%s", ruletest.FormatAll(got))
	}
	m := rollouts.AnalysisRef.Mutants[0]
	s := &rules.Subject{Resources: ruletest.Parse(t, input), Config: config.Default()}
	if !m.Apply(s) {
		t.Fatalf("mutant %q does not apply to a standalone Experiment", m.Name)
	}
	if got := ruletest.CheckResources(rollouts.AnalysisRef, s.Resources, nil, nil); len(got) != 1 {
		t.Errorf("mutant %q: %d findings, want 1:\n%s", m.Name, len(got), ruletest.FormatAll(got))
	}
}
