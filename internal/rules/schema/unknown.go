package schema

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	engine "github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// Unknown fires for a kind with no schema anywhere.
var Unknown = rules.Rule{
	ID: engine.RuleSchemaUnknown, Default: finding.SeverityError, Family: "schema",
	Doc:       "a kind with no schema: not built into the target Kubernetes version, not in the gate's built-in CRDs (Argo Rollouts, Argo CD, argocd-operator, cert-manager, external-secrets, Flux), --crd or the render; schema.ignoreMissing lists allowed group/Kind",
	Outage:    "a kind whose CRD is missing in the cluster fails the sync (\"no matches for kind\"), and nothing validated it before",
	Fix:       "give the kind's CRD with --crd FILE|DIR (or include the CRD in the render), or allow it unvalidated with --ignore-missing-schema GROUP/KIND or schema.ignoreMissing in the trusted config",
	Mutation:  "add an object of a kind nothing describes",
	PerObject: true,
	Check: func(c *rules.Context) []finding.Finding {
		return findings(c, engine.RuleSchemaUnknown, finding.SeverityError)
	},
	Mutants: []rules.Mutant{
		{Name: "add an object of a kind nothing describes", Apply: rules.OnResources(appendDoc(
			"apiVersion: selftest.kubectl-gate.dev/v1\nkind: Potato\nmetadata: {name: gate-selftest-unknown}\n"))},
	},
}
