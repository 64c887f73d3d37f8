package schema

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	engine "github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// Schema validates every object against its schema like a strict create.
var Schema = rules.Rule{
	ID: engine.RuleSchema, Default: finding.SeverityError, Family: "schema",
	Doc:       "an object the API server would reject on a strict create: unknown or duplicate field, wrong type, missing required field, enum, format, CRD CEL rule (schema.kubernetesVersion picks the target)",
	Outage:    "a typo like `replica: 3` or a Certificate without issuerRef syncs, then fails in the cluster or silently does nothing",
	Fix:       "correct the field the finding names (its path and the API server's message); kubectl explain KIND.FIELD shows the expected shape",
	Mutation:  "add an unknown field; set a wrong type; break a CRD's CEL rule",
	PerObject: true,
	Check:     func(c *rules.Context) []finding.Finding { return findings(c, engine.RuleSchema, finding.SeverityError) },
	Mutants: []rules.Mutant{
		{Name: "add an unknown field to the first object's spec", Apply: rules.OnResources(addUnknownField)},
		{Name: "give the first object's metadata.labels a wrong type", Apply: rules.OnResources(wrongType)},
		{Name: "add a cert-manager Issuer that breaks its CRD's CEL rule", Apply: rules.OnResources(appendDoc(celBroken))},
	},
}

// celBroken sets both venafi.tpp and venafi.cloud, which cert-manager's
// Issuer CRD forbids with an x-kubernetes-validations rule.
const celBroken = `apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: gate-selftest-cel, namespace: default}
spec:
  venafi:
    zone: z
    tpp: {url: "https://tpp.example.com/vedsdk", credentialsRef: {name: c}}
    cloud: {apiTokenSecretRef: {name: t, key: k}}
`

func addUnknownField(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
	for _, n := range rs {
		spec := n.Field("spec")
		if spec == nil || spec.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		if spec.Value.PipeE(yaml.SetField("gateSelftestUnknown", yaml.NewScalarRNode("1"))) == nil {
			return rs, true
		}
	}
	return rs, false
}

func wrongType(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
	for _, n := range rs {
		if n.GetKind() == "" || n.Field("metadata") == nil {
			continue
		}
		if n.PipeE(yaml.Lookup("metadata"), yaml.SetField("labels", yaml.NewListRNode("not-a-map"))) == nil {
			return rs, true
		}
	}
	return rs, false
}

func appendDoc(doc string) func([]*yaml.RNode, *config.Spec) ([]*yaml.RNode, bool) {
	return func(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
		n, err := yaml.Parse(doc)
		if err != nil {
			return rs, false
		}
		return append(rs, n), true
	}
}
