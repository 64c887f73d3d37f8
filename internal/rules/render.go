package rules

import "fmt"

var renderRules = []Rule{
	{
		ID: "render-empty", Default: SeverityError, Family: "render",
		Doc:      "the render holds fewer than render.minResources (default 1) objects; local config and the gate's own config do not count",
		Outage:   "an overlay that renders nothing syncs green and deploys nothing (or prunes everything)",
		Mutation: "empty the render",
		Check:    checkRenderEmpty,
	},
	{
		ID: "render-count", Default: SeverityError, Family: "render",
		Doc:      "--expect-resources / render.expectResources is set and the render holds a different number of objects",
		Outage:   "a refactor silently drops or duplicates objects",
		Mutation: "drop one object",
		Check:    checkRenderCount,
	},
	{
		ID: "gate-placement", Default: SeverityError, Family: "render",
		Doc:      "a Gate is under transformers: (it deletes every resource), a Pin under validators:, or a Gate/Pin sits in a base instead of the top kustomization (warning)",
		Outage:   "a misplaced gate deletes the whole render or checks the base instead of what is applied",
		Mutation: "move the Gate under transformers:",
		Check:    func(c *Context) []Finding { return c.Placement },
	},
}

func checkRenderEmpty(c *Context) []Finding {
	min := 1
	if c.Config.Render.MinResources != nil {
		min = *c.Config.Render.MinResources
	}
	if c.Counted >= min {
		return nil
	}
	return []Finding{{
		Rule: "render-empty", Severity: SeverityError,
		Message: fmt.Sprintf("the render holds %d object(s), fewer than the %d required: an empty render syncs green and deploys nothing", c.Counted, min),
	}}
}

func checkRenderCount(c *Context) []Finding {
	want := c.Config.Render.ExpectResources
	if want == nil || c.Counted == *want {
		return nil
	}
	return []Finding{{
		Rule: "render-count", Severity: SeverityError,
		Message: fmt.Sprintf("the render holds %d object(s), expected %d", c.Counted, *want),
	}}
}
