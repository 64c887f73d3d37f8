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
	Fix:      "list a Gate under validators: and a Pin last under transformers: of the top-level kustomization (the one you build), not in a base",
	Mutation: "move the Gate under transformers:",
	Reads:    []string{},
	Check:    func(c *rules.Context) []finding.Finding { return c.Placement },
}
