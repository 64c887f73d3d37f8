package live

import (
	"fmt"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// judgeRevision runs live-revision: the synced commit must be the expected
// one, and Argo CD must say Synced. status.sync.revision is the commit Argo
// CD compared the cluster against, not proof it was applied: when a sync to
// it failed, the revision is new and the status OutOfSync.
func (r *Result) judgeRevision(exp Expect, appRef *finding.ResourceRef) []finding.Finding {
	a := r.App
	var out []finding.Finding
	if a.SyncStatus != "" && a.SyncStatus != "Synced" {
		out = append(out, finding.Finding{Rule: "live-revision", Severity: finding.SeverityError, ResourceRef: appRef,
			Field:   &finding.Field{Path: "status.sync.status", CurrentValue: a.SyncStatus, ProposedValue: "Synced"},
			Message: fmt.Sprintf("Argo CD reports %s against %s: the cluster does not run that commit as git holds it", a.SyncStatus, revisions(a))})
	}
	if exp.Revision == "" {
		return out
	}
	for _, rev := range a.Revisions {
		if sameRevision(exp.Revision, rev) {
			r.RevisionOK = true
			return out
		}
	}
	path := "status.sync.revision"
	if a.MultiSource {
		path = "status.sync.revisions"
	}
	var current any
	if len(a.Revisions) > 0 {
		current = strings.Join(a.Revisions, ",")
	}
	return append(out, finding.Finding{Rule: "live-revision", Severity: finding.SeverityError, ResourceRef: appRef,
		Field:   &finding.Field{Path: path, CurrentValue: current, ProposedValue: exp.Revision},
		Message: fmt.Sprintf("synced at %s, but the expected commit is %s (%s): the green light is not for this commit", revisions(a), exp.Revision, exp.RevisionFrom)})
}

func revisions(a *App) string {
	if len(a.Revisions) == 0 {
		return "no revision (never synced)"
	}
	return strings.Join(a.Revisions, ", ")
}

// sameRevision matches a full SHA, or an abbreviated one of 7+ characters.
func sameRevision(want, got string) bool {
	if len(want) >= 7 && len(want) < len(got) {
		return strings.HasPrefix(got, want)
	}
	return want == got
}
