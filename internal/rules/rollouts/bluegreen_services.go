package rollouts

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// BlueGreenServices fires on blue/green Service pairs the controller rejects or that leave nothing to test.
var BlueGreenServices = rules.Rule{
	ID: "rollout-bluegreen-services", Default: finding.SeverityError, Family: "rollouts",
	Doc:      "activeService or previewService is missing, they are the same Service, either is not in the render (same namespace), or another Rollout names it too",
	Outage:   "the Rollout is InvalidSpec, or the new version takes no traffic before promotion and nobody can test it",
	Fix:      "give activeService and previewService two different Services of the render, in the Rollout's namespace, named by this Rollout only",
	Mutation: "point previewService at activeService",
	Follows:  follows,
	Reads:    reads,
	Check:    checkBlueGreenServices,
	Mutants: []rules.Mutant{
		{Name: "point previewService at activeService", Apply: rules.OnResources(onBlueGreen(previewAtActive))},
		{Name: "remove previewService", Apply: rules.OnResources(onBlueGreen(clearFields("previewService")))},
	},
}

// checkBlueGreenServices checks the active/preview pair of every blue/green.
func checkBlueGreenServices(c *rules.Context) []finding.Finding {
	const rule = "rollout-bluegreen-services"
	var out []finding.Finding
	users := serviceUsers(c)
	for _, ro := range rollouts(c) {
		if !hasStrategy(ro, "blueGreen") {
			continue
		}
		pair, err := blueGreenRefs(ro)
		if err != nil {
			out = append(out, unreadable(rule, ro, "spec.strategy.blueGreen", err))
			continue
		}
		out = append(out, pairFindings(c, rule, ro, pair, [2]string{whyActive, whyPreview})...)
		out = append(out, sharedFindings(users, rule, ro, pair[:])...)
	}
	return out
}

func previewAtActive(bg *yaml.RNode) bool {
	active := stringField(bg, "activeService")
	return active != "" && setString(bg, "previewService", active)
}
