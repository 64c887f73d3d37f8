package live

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Revision is judged by `kubectl gate status` against the cluster
// (internal/live); it has no Check.
var Revision = rules.Rule{
	ID: "live-revision", Default: finding.SeverityError, Family: "live",
	Doc:    "`status`: the Application's synced revision (status.sync.revision, or one of status.sync.revisions) is not the expected commit (--revision SHA, or the HEAD of --git DIR), or Argo CD reports it OutOfSync",
	Outage: "the green light is for an older commit: the fix that was merged is not what runs",
	Fix:    "sync the expected commit (argocd app sync), or pass the commit that is meant to run with --revision / --git",
}
