package schema

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	engine "github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// Deprecated fires for an apiVersion the target version deprecates.
var Deprecated = rules.Rule{
	ID: engine.RuleAPIDeprecated, Default: finding.SeverityWarning, Family: "schema",
	Doc:      "an apiVersion the target Kubernetes version still serves but has deprecated, with the release that removes it and the replacement; for CRDs, a version marked deprecated",
	Outage:   "the next cluster upgrade removes the API and the sync breaks",
	Mutation: "add a v1 Endpoints object (deprecated since 1.33)",
	Check: func(c *rules.Context) []finding.Finding {
		return findings(c, engine.RuleAPIDeprecated, finding.SeverityWarning)
	},
	Mutants: []rules.Mutant{
		{Name: "add a v1 Endpoints object (deprecated since 1.33)", Apply: rules.OnResources(appendDoc(
			"apiVersion: v1\nkind: Endpoints\nmetadata: {name: gate-selftest-deprecated, namespace: default}\n"))},
	},
}
