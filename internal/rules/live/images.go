package live

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Images is judged by `kubectl gate status` against the cluster
// (internal/live); it has no Check.
var Images = rules.Rule{
	ID: "live-images", Default: finding.SeverityError, Family: "live",
	Doc:    "`status`: pods of the Application's workloads run an image that is not expected (the -k render, else status.summary.images), or an expected image runs in no pod; digests are compared when both sides have one",
	Outage: "Synced, yet pods still run the old image (a moved tag, a stuck rollout, a manual `kubectl set image`)",
	Fix:    "find why the pods run another image (a stuck rollout, a moved tag, a manual edit) and sync the expected one",
}
