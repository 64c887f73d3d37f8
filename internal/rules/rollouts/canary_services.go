package rollouts

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// CanaryServices fires on canary Service pairs the controller rejects or that split nothing.
var CanaryServices = rules.Rule{
	ID: "rollout-canary-services", Default: finding.SeverityError, Family: "rollouts",
	Doc:      "canaryService/stableService (pingService/pongService with pingPong) are the same Service, are not in the render (same namespace), are named by another Rollout too, or are missing where trafficRouting needs them (a basic canary without trafficRouting may omit them)",
	Outage:   "the controller marks the Rollout InvalidSpec mid-deploy, or canary and stable get the same traffic and the canary is never really tested",
	Fix:      "give canaryService and stableService two different Services of the render, in the Rollout's namespace, named by this Rollout only",
	Mutation: "point canaryService at stableService",
	Follows:  follows,
	Reads:    reads,
	Check:    checkCanaryServices,
	Mutants: []rules.Mutant{
		{Name: "point canaryService at stableService", Apply: rules.OnResources(onCanary(canaryAtStable))},
		{Name: "rename canaryService to a Service not in the render", Apply: rules.OnResources(onCanary(renameField("canaryService")))},
	},
}

// checkCanaryServices checks the Service pairs of every canary. A basic
// canary (no trafficRouting) may leave them out: the controller then splits
// traffic by replica count behind the application's own Service, a valid
// and documented setup (the rule's Doc says so).
func checkCanaryServices(c *rules.Context) []finding.Finding {
	const rule = "rollout-canary-services"
	var out []finding.Finding
	users := serviceUsers(c)
	for _, ro := range rollouts(c) {
		if !hasStrategy(ro, "canary") {
			continue
		}
		f, pairs, _, err := canaryRefs(ro)
		if err != nil {
			out = append(out, unreadable(rule, ro, "spec.strategy.canary", err))
			continue
		}
		var why [2]string
		if requiresCanaryStable(f) {
			why = [2]string{whyTrafficRouting, whyTrafficRouting}
		}
		out = append(out, pairFindings(c, rule, ro, pairs[0], why)...)
		if len(pairs) > 1 {
			out = append(out, pairFindings(c, rule, ro, pairs[1], [2]string{whyPingPong, whyPingPong})...)
		}
		var refs []serviceRef
		for _, p := range pairs {
			refs = append(refs, p[0], p[1])
		}
		out = append(out, sharedFindings(users, rule, ro, refs)...)
	}
	return out
}

func canaryAtStable(canary *yaml.RNode) bool {
	stable := stringField(canary, "stableService")
	return stable != "" && stringField(canary, "canaryService") != "" && setString(canary, "canaryService", stable)
}
