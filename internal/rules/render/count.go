package render

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Count fires when the render holds another number of objects than expected.
var Count = rules.Rule{
	ID: "render-count", Default: finding.SeverityError, Family: "render",
	Doc:      "--expect-resources / render.expectResources is set and the render holds a different number of objects",
	Outage:   "a refactor silently drops or duplicates objects",
	Fix:      "make the render hold the expected objects, or update --expect-resources / render.expectResources to the new count in the same change",
	Mutation: "drop one object",
	Reads:    []string{},
	Check:    checkCount,
	Mutants: []rules.Mutant{
		{Name: "drop one object", Apply: rules.OnResources(func(rs []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
			if cfg.Render.ExpectResources == nil || manifest.Count(rs) == 0 {
				return nil, false
			}
			return rs[1:], true
		})},
	},
}

func checkCount(c *rules.Context) []finding.Finding {
	want := c.Config.Render.ExpectResources
	if want == nil || c.Counted == *want {
		return nil
	}
	return []finding.Finding{{
		Rule: "render-count", Severity: finding.SeverityError,
		Message: fmt.Sprintf("the render holds %d object(s), expected %d", c.Counted, *want),
	}}
}
