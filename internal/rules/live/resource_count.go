package live

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// ResourceCount is judged by `kubectl gate status` against the cluster
// (internal/live); it has no Check.
var ResourceCount = rules.Rule{
	ID: "live-resource-count", Default: finding.SeverityError, Family: "live",
	Doc:    "`status`: the Application manages 0 objects or a different number than the -k render holds (local config excluded), or lists a managed object that does not exist",
	Outage: "an empty or wrong source syncs green: nothing to diff, nothing deployed",
	Fix:    "compare the Application's managed objects with the render and fix the source or the sync",
}
