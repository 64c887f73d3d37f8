package policy

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

// TestOffKeepsNoVerdict: `--rule policy=off` drops the policies' verdicts,
// but a policy the gate could not evaluate (a tool that crashed, an
// authorizer check) stays no verdict: off never turns "could not decide"
// into a pass (issue 9).
func TestOffKeepsNoVerdict(t *testing.T) {
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n"
	decided := finding.Finding{Rule: "policy", Severity: finding.SeverityError, Message: "require-pinned: image not pinned"}
	undecided := finding.Finding{Rule: "policy", Severity: finding.SeverityError, NoVerdict: true, Message: "kyverno crashed"}
	for _, sev := range []string{"off", "warning"} {
		cfg := config.Default()
		cfg.Rules = map[string]string{"policy": sev}
		got := ruletest.CheckResources(Policy, ruletest.Parse(t, deploy), cfg, func(c *rules.Context) {
			c.Policy = []finding.Finding{decided, undecided}
		})
		var kept []finding.Finding
		for _, f := range got {
			if f.NoVerdict {
				kept = append(kept, f)
			}
		}
		if len(kept) != 1 || kept[0].Severity != finding.SeverityError {
			t.Errorf("policy=%s: %+v, want the no-verdict finding kept as an error", sev, got)
		}
		if sev == "off" && len(got) != 1 {
			t.Errorf("policy=off: %+v, want only the no-verdict finding", got)
		}
	}
	// Default severity: both fire.
	got := ruletest.CheckResources(Policy, ruletest.Parse(t, deploy), nil, func(c *rules.Context) {
		c.Policy = []finding.Finding{decided, undecided}
	})
	if len(got) != 2 {
		t.Errorf("default: %+v, want both findings", got)
	}
}
