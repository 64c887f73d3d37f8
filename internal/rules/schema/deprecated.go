package schema

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	engine "github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// Deprecated fires for an apiVersion the target version deprecates.
var Deprecated = rules.Rule{
	ID: engine.RuleAPIDeprecated, Default: finding.SeverityWarning, Family: "schema",
	Doc:       "an apiVersion the target Kubernetes version still serves but has deprecated, with the release that removes it and the replacement; for CRDs, a version marked deprecated",
	Outage:    "the next cluster upgrade removes the API and the sync breaks",
	Fix:       "move the object to the replacement apiVersion named in the finding before the cluster upgrade",
	Mutation:  "add a v1 Endpoints object (deprecated since 1.33)",
	PerObject: true,
	Check: func(c *rules.Context) []finding.Finding {
		return findings(c, engine.RuleAPIDeprecated, finding.SeverityWarning)
	},
	Mutants: []rules.Mutant{
		{Name: "add a v1 Endpoints object (deprecated since 1.33)", Apply: whenStopping(engine.RuleAPIDeprecated, appendDoc(
			"apiVersion: v1\nkind: Endpoints\nmetadata: {name: gate-selftest-deprecated, namespace: default}\n"))},
	},
}

// whenStopping is rules.OnResources for the mutant of a warning rule: it
// applies only where the rule's finding stops the deploy (--fail-on warning,
// or the rule raised to error); elsewhere a warning lets it through by
// design, so selftest shows the row n/a rather than missed.
func whenStopping(rule string, edit func([]*yaml.RNode, *config.Spec) ([]*yaml.RNode, bool)) func(*rules.Subject) bool {
	on := rules.OnResources(edit)
	return func(s *rules.Subject) bool {
		if s.Config == nil || (!s.Config.FailOnWarning() && s.Config.Rules[rule] != string(finding.SeverityError)) {
			return false
		}
		return on(s)
	}
}
