package rollouts_test

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

// rolloutFindings runs every rule of the rollouts family on a render, in
// list order.
func rolloutFindings(res []*yaml.RNode) []finding.Finding {
	var out []finding.Finding
	for _, r := range all.Rules() {
		if r.Family == "rollouts" {
			out = append(out, ruletest.CheckResources(r, res, nil, nil)...)
		}
	}
	return out
}

// checkRule runs one rule on a YAML stream and returns its findings.
func checkRule(t *testing.T, id, stream string) []finding.Finding {
	t.Helper()
	r, ok := all.Lookup(id)
	if !ok {
		t.Fatalf("no rule %s", id)
	}
	return ruletest.Check(t, r, ruletest.Case{Input: stream})
}

var (
	formatFinding = ruletest.Format
	formatAll     = ruletest.FormatAll
)
