package schema

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	engine "github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// Removed fires for an apiVersion the target version no longer serves.
var Removed = rules.Rule{
	ID: engine.RuleAPIRemoved, Default: finding.SeverityError, Family: "schema",
	Doc:       "an apiVersion the target Kubernetes version no longer serves, naming the release that removed it and the replacement (from k8s.io/api's lifecycle data)",
	Outage:    "a chart still on extensions/v1beta1 or policy/v1beta1 breaks the sync right after a cluster upgrade",
	Fix:       "move the object to the replacement apiVersion named in the finding (kubectl convert, or the chart's newer version), or target an older --kubernetes-version if the cluster really runs one",
	Mutation:  "move a Deployment to extensions/v1beta1",
	PerObject: true,
	Check: func(c *rules.Context) []finding.Finding {
		return findings(c, engine.RuleAPIRemoved, finding.SeverityError)
	},
	Mutants: []rules.Mutant{
		{Name: "move the first apps/v1 workload to extensions/v1beta1", Apply: rules.OnResources(func(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
			for _, n := range rs {
				switch n.GetKind() {
				case "Deployment", "DaemonSet", "ReplicaSet":
					if n.GetApiVersion() == "apps/v1" {
						n.SetApiVersion("extensions/v1beta1")
						return rs, true
					}
				}
			}
			return appendDoc("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: gate-selftest-removed, namespace: default}\n")(rs, nil)
		})},
	},
}
