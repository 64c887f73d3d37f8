package argocd_test

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/argocd"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

const argocdCM = `
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers: [/spec/replicas]
`

// TestWidenIgnoreDifferences: the ignoreDifferences mutant widens an
// Application's entry, adds one, or widens argocd-cm's, and applies to
// nothing else.
func TestWidenIgnoreDifferences(t *testing.T) {
	widen := argocd.IgnoreDifferences.Mutants[0]
	cases := []struct {
		name, input string
		applies     bool
	}{
		{"an Application's pointer", appWithIgnore("    - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}\n"), true},
		{"an Application without entries gets one", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec: {}\n", true},
		{"argocd-cm", argocdCM, true},
		{"an ArgoCD resource's entry", argoCDOperator("v1beta1", "  resourceIgnoreDifferences:\n    resourceIdentifiers:\n      - {group: apps, kind: Deployment, customization: {jsonPointers: [/spec/replicas]}}\n"), true},
		{"an ArgoCD resource with only all gets an entry", argoCDOperator("v1alpha1", "  resourceIgnoreDifferences:\n    all: {jsonPointers: [/spec/replicas]}\n"), true},
		{"an ArgoCD resource without any", argoCDOperator("v1beta1", "  server: {route: {enabled: true}}\n"), true},
		{"nothing of Argo CD", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &rules.Subject{Resources: ruletest.Parse(t, c.input), Config: config.Default()}
			if got := argo.IgnoreDifferences(s.Resources[0], s.Config); len(got) != 0 {
				t.Fatalf("the baseline fires: %v", got)
			}
			if ok := widen.Apply(s); ok != c.applies {
				t.Fatalf("applies = %v, want %v", ok, c.applies)
			}
			if c.applies && len(argo.IgnoreDifferences(s.Resources[0], s.Config)) == 0 {
				t.Errorf("the widened entry does not fire:\n%s", s.Resources[0].MustString())
			}
		})
	}
}

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

// TestMoveDestinationMutant: on a source whose objects set no namespace
// (they land in any destination), the destination mutant removes the
// destination namespace: moving it would leave the rule nothing to report.
// Seen failing when it moved it.
func TestMoveDestinationMutant(t *testing.T) {
	mixed := func(c *rules.Context) {
		c.Apps = []argo.AppSource{appSource(t, c.Resources[0], -1, "overlays/prod", strings.ReplaceAll(prodRender, ", namespace: shop-prod", ""))}
	}
	ruletest.Mutants(t, argocd.DestinationNamespace, ruletest.Case{Input: prodApp, Setup: mixed})
}
