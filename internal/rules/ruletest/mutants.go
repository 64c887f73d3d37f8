package ruletest

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Mutants checks every mutant of a rule on a passing input: the rule does
// not fire on c, each mutant applies to a copy of it, and the rule fires on
// the result. It is how a rule's test proves selftest can break the rule.
func Mutants(t *testing.T, r rules.Rule, c Case) {
	t.Helper()
	if len(r.Mutants) == 0 {
		t.Fatalf("%s has no mutants", r.ID)
	}
	if got := Check(t, r, c); len(got) != 0 {
		t.Fatalf("%s fires on the baseline:\n%s", r.ID, FormatAll(got))
	}
	for _, m := range r.Mutants {
		t.Run(m.Name, func(t *testing.T) {
			t.Helper()
			s := subject(t, c)
			if !m.Apply(s) {
				t.Fatalf("mutant %q does not apply to the baseline", m.Name)
			}
			got := CheckResources(r, s.Resources, s.Config, func(ctx *rules.Context) {
				if c.Setup != nil {
					c.Setup(ctx)
				}
				ctx.Apps = s.Apps
			})
			if len(got) == 0 {
				t.Errorf("%s does not fire on mutant %q", r.ID, m.Name)
			}
		})
	}
}

// subject is a copy of a case's input for a mutant to change.
func subject(t *testing.T, c Case) *rules.Subject {
	cfg := config.Default()
	if c.Config != nil {
		cp := *c.Config
		cfg = &cp
	}
	res := Parse(t, c.Input)
	ctx := &rules.Context{Resources: res, Config: cfg}
	if c.Setup != nil {
		c.Setup(ctx)
	}
	apps := make([]argo.AppSource, len(ctx.Apps))
	for i, a := range ctx.Apps {
		a.Resources = copyAll(a.Resources)
		apps[i] = a
	}
	return &rules.Subject{Resources: res, Config: cfg, Apps: apps}
}

func copyAll(in []*yaml.RNode) []*yaml.RNode {
	out := make([]*yaml.RNode, len(in))
	for i, n := range in {
		out[i] = n.Copy()
	}
	return out
}
