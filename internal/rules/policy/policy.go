package policy

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Policy reports what the configured policies decided.
var Policy = rules.Rule{
	ID: "policy", Default: finding.SeverityError, Family: "policy", MayNoVerdict: true,
	Doc: "a configured policy rejects an object: a ValidatingAdmissionPolicy (--policy, spec.policies, --policies-from-render) evaluated as the API server would on create " +
		"(validationActions Deny → error, Warn → warning, Audit → info), or a Kyverno/Rego policy run by kyverno/conftest (--kyverno-policy, --rego); " +
		"a policy that checks nothing is a warning, an authorizer check or a tool that is missing, crashes, times out, prints what does not parse or judged none of the render (or something else) is no verdict",
	Outage:   "the API server rejects the deploy half-way, or a policy tool's red lines scroll past in a pipeline that stays green",
	Fix:      "change the object so the policy admits it (the message is the policy's), or, if the policy is wrong, fix the policy in the same review",
	Mutation: "unpin an image, drop resource limits, let a blue/green promote itself",
	Reads:    []string{},
	Check:    func(c *rules.Context) []finding.Finding { return c.Policy },
	Mutants: []rules.Mutant{
		{Name: "replace an image digest with :latest", Apply: rules.OnResources(unpin)},
		{Name: "remove a container's resource limits", Apply: rules.OnResources(dropLimits)},
		{Name: "set a blue/green Rollout's autoPromotionEnabled to true", Apply: rules.OnResources(autoPromote)},
	},
}

// configured: the mutants apply only when ValidatingAdmissionPolicies are
// configured (spec.policies, which --policy adds to); without policies the
// rule has nothing to fire and selftest reports it not applicable.
func configured(cfg *config.Spec) bool { return cfg != nil && len(cfg.Policies) > 0 }

// containers returns the container lists of a workload's pod template.
func containers(r *yaml.RNode) []*yaml.RNode {
	var out []*yaml.RNode
	for _, path := range [][]string{
		{"spec", "template", "spec", "containers"},
		{"spec", "jobTemplate", "spec", "template", "spec", "containers"},
		{"spec", "containers"},
	} {
		list, err := r.Pipe(yaml.Lookup(path...))
		if err != nil || list == nil {
			continue
		}
		items, _ := list.Elements()
		out = append(out, items...)
	}
	return out
}

// unpin rewrites the first digest-pinned image to a :latest tag.
func unpin(resources []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
	if !configured(cfg) {
		return resources, false
	}
	for _, r := range resources {
		for _, c := range containers(r) {
			img, err := c.Pipe(yaml.Get("image"))
			if err != nil || img == nil {
				continue
			}
			v := yaml.GetValue(img)
			at := strings.Index(v, "@sha256:")
			if at < 0 {
				continue
			}
			repo := v[:at]
			if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
				repo = repo[:i]
			}
			img.YNode().Value = repo + ":latest"
			return resources, true
		}
	}
	return resources, false
}

// dropLimits removes the first container's resources.limits.
func dropLimits(resources []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
	if !configured(cfg) {
		return resources, false
	}
	for _, r := range resources {
		for _, c := range containers(r) {
			res, err := c.Pipe(yaml.Lookup("resources"))
			if err != nil || res == nil || res.Field("limits") == nil {
				continue
			}
			if _, err := res.Pipe(yaml.Clear("limits")); err == nil {
				return resources, true
			}
		}
	}
	return resources, false
}

// autoPromote sets the first blue/green Rollout's autoPromotionEnabled.
func autoPromote(resources []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
	if !configured(cfg) {
		return resources, false
	}
	for _, r := range resources {
		if r.GetKind() != "Rollout" {
			continue
		}
		bg, err := r.Pipe(yaml.Lookup("spec", "strategy", "blueGreen"))
		if err != nil || bg == nil {
			continue
		}
		if err := bg.PipeE(yaml.SetField("autoPromotionEnabled", yaml.NewScalarRNode("true"))); err == nil {
			bg.Field("autoPromotionEnabled").Value.YNode().Tag = yaml.NodeTagBool
			return resources, true
		}
	}
	return resources, false
}
