package live

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Health is judged by `kubectl gate status` against the cluster
// (internal/live); it has no Check.
var Health = rules.Rule{
	ID: "live-health", Default: finding.SeverityError, Family: "live",
	Doc:    "`status`: a managed object exists but its controller rejected it or has not caught up: Rollout Degraded, InvalidSpec or aborted; Certificate or ExternalSecret Ready=False; any Ready/Available=False or ProgressDeadlineExceeded; status.observedGeneration < metadata.generation",
	Outage: "applied is not working: a Rollout aborted, a certificate never issued, a secret never synced",
	Fix:    "look at the object's status and events (kubectl describe), fix the cause, and sync again",
}
