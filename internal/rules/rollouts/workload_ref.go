package rollouts

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// WorkloadRef fires on a workloadRef the controller cannot follow.
var WorkloadRef = rules.Rule{
	ID: "rollout-workload-ref", Default: finding.SeverityError, Family: "rollouts",
	Doc:      "workloadRef names a Deployment (or ReplicaSet, PodTemplate) that is not in the render (same namespace), a kind the controller does not support, or the Rollout also has its own template",
	Outage:   "the Rollout has no pod template: the controller creates no pods and the deploy never starts, while the sync shows green",
	Fix:      "add the Deployment workloadRef names to the render (same namespace), correct its name or kind, and remove the Rollout's own template",
	Mutation: "rename the workloadRef target",
	Follows:  follows,
	Reads:    reads,
	Check:    checkWorkloadRef,
	Mutants: []rules.Mutant{
		{Name: "rename the workloadRef target", Apply: rules.OnResources(onRollout(renameWorkloadRef))},
	},
}

const ruleWorkloadRef = "rollout-workload-ref"

// checkWorkloadRef checks each workloadRef as the controller resolves it
// (rollout/templateref.go): a supported kind (apps Deployment or
// ReplicaSet, core PodTemplate), present in the render in the Rollout's
// namespace, and no pod template of the Rollout's own beside it.
func checkWorkloadRef(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, ro := range rollouts(c) {
		var ref objectRef
		found, err := decodeAt(ro, "spec.workloadRef", &ref)
		switch {
		case err != nil:
			out = append(out, unreadable(ruleWorkloadRef, ro, "spec.workloadRef", err))
		case found:
			out = append(out, workloadRefFindings(c, ro, ref)...)
		}
	}
	return out
}

func workloadRefFindings(c *rules.Context, ro *yaml.RNode, ref objectRef) []finding.Finding {
	group := apiGroup(ref.APIVersion)
	var out []finding.Finding
	if _, ok := workloadKinds[[2]string{group, ref.Kind}]; !ok {
		out = append(out, workloadFinding(ro, "spec.workloadRef", ref.APIVersion+" "+ref.Kind,
			"workloadRef names apiVersion %q kind %q: the controller supports apps/v1 Deployment or ReplicaSet and v1 PodTemplate only, and the Rollout gets no pod template", ref.APIVersion, ref.Kind))
	} else if lookup(c, group, ref.Kind, manifest.Namespace(ro), ref.Name) == nil {
		out = append(out, workloadFinding(ro, "spec.workloadRef.name", ref.Name,
			"workloadRef names %s %q, which is not in the render%s: the Rollout has no pod template, so the controller creates no pods and the update never starts", ref.Kind, ref.Name, inNamespace(ro)))
	}
	var template map[string]any
	if _, err := decodeAt(ro, "spec.template", &template); err == nil && !isEmpty(template) {
		out = append(out, workloadFinding(ro, "spec.template", nil,
			"the Rollout has both workloadRef and a pod template: the controller rejects it (template must be empty for workload reference rollout); a commonLabels or patch that adds template labels to Rollouts causes this"))
	}
	return out
}

func workloadFinding(ro *yaml.RNode, path string, current any, format string, args ...any) finding.Finding {
	return manifest.Finding(ruleWorkloadRef, finding.SeverityError, ro, path, current, format, args...)
}

// isEmpty reports whether a decoded YAML value holds nothing but empty maps,
// empty lists and nulls.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if !isEmpty(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	return false
}

func renameWorkloadRef(ro *yaml.RNode) bool {
	ref, err := ro.Pipe(yaml.Lookup("spec", "workloadRef"))
	if err != nil || ref == nil {
		return false
	}
	return renameField("name")(ref)
}
