package argocd_test

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/argocd"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

// TestArgoCDMutants: each argocd rule's selftest mutants turn a passing
// Application (and the render of its source) red.
func TestArgoCDMutants(t *testing.T) {
	rendered := func(c *rules.Context) {
		app := c.Resources[0]
		c.Apps = []argo.AppSource{appSource(t, app, -1, "overlays/prod", prodRender)}
	}
	for _, r := range []rules.Rule{argocd.DestinationNamespace, argocd.SourceEmpty, argocd.IgnoreDifferences} {
		t.Run(r.ID, func(t *testing.T) {
			ruletest.Mutants(t, r, ruletest.Case{Input: prodApp, Setup: rendered})
		})
	}
}
