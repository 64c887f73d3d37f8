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
