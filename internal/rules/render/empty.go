package render

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Empty fires when the render holds (next to) nothing.
var Empty = rules.Rule{
	ID: "render-empty", Default: finding.SeverityError, Family: "render", Unwaivable: true,
	Doc:      "the render holds fewer than render.minResources (default 1) objects; local config and the gate's own config do not count",
	Outage:   "an overlay that renders nothing syncs green and deploys nothing (or prunes everything)",
	Fix:      "fix the path or the kustomization so it renders objects (kubectl gate check -k DIR -v shows what was read), or lower render.minResources when empty is intended",
	Mutation: "empty the render",
	Reads:    []string{},
	Check:    checkEmpty,
	Mutants: []rules.Mutant{
		{Name: "empty the render", Apply: rules.OnResources(func(_ []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
			return []*yaml.RNode{}, true
		})},
	},
}

func checkEmpty(c *rules.Context) []finding.Finding {
	min := 1
	if c.Config.Render.MinResources != nil {
		min = *c.Config.Render.MinResources
	}
	if c.Counted >= min {
		return nil
	}
	return []finding.Finding{{
		Rule: "render-empty", Severity: finding.SeverityError,
		Message: fmt.Sprintf("the render holds %d object(s), fewer than the %d required: an empty render syncs green and deploys nothing", c.Counted, min),
	}}
}
