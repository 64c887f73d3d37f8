package render

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Placement reports what the renderer saw of the gate's own placement in the
// kustomization (Context.Placement): it cannot be seen in the render.
var Placement = rules.Rule{
	ID: "gate-placement", Default: finding.SeverityError, Family: "render", Unwaivable: true,
	Doc:      "a Gate is under transformers: (it deletes every resource), a Pin under validators:, or a Gate/Pin sits in a base instead of the top kustomization (warning)",
	Outage:   "a misplaced gate deletes the whole render or checks the base instead of what is applied",
	Mutation: "move the Gate under transformers:",
	Check:    func(c *rules.Context) []finding.Finding { return c.Placement },
}
