package schema

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	engine "github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// APIValidation fires for a built-in object that passes the schema but
// that the API server's hand-written validation of its kind rejects.
//
// It is its own rule rather than more of schema: its verdicts come from
// another layer of the API server (k8s.io/kubernetes' Validate… functions
// after decoding, defaulting and conversion, internal/apivalidation), its
// findings are about meaning rather than shape (a selector that matches no
// pod, a request above its limit), and a team adopting it can set its
// severity apart from schema's.
var APIValidation = rules.Rule{
	ID: engine.RuleAPIValidation, Default: finding.SeverityError, Family: "schema",
	Doc:       "a built-in object the API server's own validation of its kind rejects on create, after the schema passed (k8s.io/kubernetes' Validate… of the target release, after its decoding, defaulting and conversion): a selector that does not match the template, no containers, a request above its limit, a quantity like 1Gb, an enum value like imagePullPolicy: Sometimes, a port out of range, duplicate container names or ports, a bad probe, label or annotation syntax; a webhook configuration the API server refuses; a CustomResourceDefinition whose CEL rules do not compile or exceed the cost budget, and a ValidatingAdmissionPolicy whose expressions do not compile (whatever its failurePolicy); with the API server's field path and message. Validated as a cluster started with --allow-privileged=true, as production clusters are",
	Outage:    "Argo CD syncs, the API server refuses the object half-way, and the sync goes red in production instead of in the pull request",
	Fix:       "correct the field the message names, as the API server says (its field path and message are in the finding); run kubectl apply --dry-run=server against a test cluster to confirm",
	Mutation:  "make a Deployment's selector miss its template labels; add an invalid imagePullPolicy",
	PerObject: true,
	Check: func(c *rules.Context) []finding.Finding {
		return findings(c, engine.RuleAPIValidation, finding.SeverityError)
	},
	Mutants: []rules.Mutant{
		{Name: "make the first Deployment's selector miss its template labels", Apply: rules.OnResources(selectorMiss)},
		{Name: "set imagePullPolicy: Sometimes on the first container of the first workload", Apply: rules.OnResources(pullPolicySometimes)},
	},
}

func selectorMiss(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
	for _, n := range rs {
		if n.GetKind() != "Deployment" || n.GetApiVersion() != "apps/v1" {
			continue
		}
		ml, err := n.Pipe(yaml.Lookup("spec", "selector", "matchLabels"))
		if err != nil || ml == nil {
			continue
		}
		if ml.PipeE(yaml.SetField("gate-selftest", yaml.NewStringRNode("no-pod-has-this"))) == nil {
			return rs, true
		}
	}
	return rs, false
}

func pullPolicySometimes(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
	for _, n := range rs {
		switch n.GetKind() {
		case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
		default:
			continue
		}
		cs, err := n.Pipe(yaml.Lookup("spec", "template", "spec", "containers"))
		if err != nil || cs == nil || len(cs.Content()) == 0 || cs.YNode().Kind != yaml.SequenceNode {
			continue
		}
		if yaml.NewRNode(cs.Content()[0]).PipeE(yaml.SetField("imagePullPolicy", yaml.NewStringRNode("Sometimes"))) == nil {
			return rs, true
		}
	}
	return rs, false
}
