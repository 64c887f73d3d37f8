package live

import (
	"fmt"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// Pending says in a few words per rule what the result still waits for,
// in the order of Judge: "revision (synced 1a2b3c4, want 9f8e7d6)",
// "images (1 running, not expected; 1 expected, not running)",
// "objects (managed 3, want 4)", "health (Rollout/api (ns shop): …)".
// Only findings at error severity count, and warnings too when
// failOnWarning is set; nil means nothing is pending.
func (r *Result) Pending(failOnWarning bool) []string {
	by := map[string][]finding.Finding{}
	var order []string
	for _, f := range r.Findings {
		if f.Severity != finding.SeverityError && (!failOnWarning || f.Severity != finding.SeverityWarning) {
			continue
		}
		if by[f.Rule] == nil {
			order = append(order, f.Rule)
		}
		by[f.Rule] = append(by[f.Rule], f)
	}
	out := make([]string, 0, len(order))
	for _, rule := range order {
		out = append(out, r.pendingOf(rule, by[rule]))
	}
	return out
}

func (r *Result) pendingOf(rule string, fs []finding.Finding) string {
	switch rule {
	case "live-revision":
		if r.Expect.Revision != "" && !r.RevisionOK {
			return fmt.Sprintf("revision (synced %s, want %s)", short(r.App.Revisions), shortSHA(r.Expect.Revision))
		}
		return "revision (Argo CD says " + r.App.SyncStatus + ")"
	case "live-images":
		notRunning := 0
		for _, e := range r.Expected {
			if e.MustRun && len(e.Pods) == 0 {
				notRunning++
			}
		}
		return fmt.Sprintf("images (%d running, not expected; %d expected, not running)", len(r.Unexpected), notRunning)
	case "live-resource-count":
		if r.ExpectedObjs >= 0 && r.Managed != r.ExpectedObjs {
			return fmt.Sprintf("objects (managed %d, want %d)", r.Managed, r.ExpectedObjs)
		}
		return fmt.Sprintf("objects (%s)", firstOf(fs))
	case "live-health":
		return fmt.Sprintf("health (%s)", firstOf(fs))
	}
	return fmt.Sprintf("%s (%s)", rule, firstOf(fs))
}

// firstOf names the first finding's object and field, and how many more.
func firstOf(fs []finding.Finding) string {
	f := fs[0]
	s := f.Message
	if f.ResourceRef != nil {
		s = f.ResourceRef.Kind + "/" + f.ResourceRef.Name
		if f.Field != nil && f.Field.Path != "" {
			s += " " + f.Field.Path
			if f.Field.CurrentValue != nil {
				s += fmt.Sprintf(" %v", f.Field.CurrentValue)
			}
		}
	}
	if len(fs) > 1 {
		s += fmt.Sprintf(" and %d more", len(fs)-1)
	}
	return s
}

func short(revs []string) string {
	if len(revs) == 0 {
		return "nothing"
	}
	out := make([]string, len(revs))
	for i, r := range revs {
		out[i] = shortSHA(r)
	}
	return strings.Join(out, ",")
}

// shortSHA abbreviates a commit SHA as git does (7 characters).
func shortSHA(s string) string {
	if len(s) == 40 || len(s) == 64 {
		return s[:7]
	}
	return s
}
