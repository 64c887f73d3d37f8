package plugin

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/live"
)

// printGlance prints the at-a-glance block of `status`: expected vs synced
// commit, expected vs running images, object counts, unhealthy objects.
// The findings follow it.
func printGlance(w io.Writer, r *live.Result, took time.Duration) {
	var b strings.Builder
	a := r.App
	fmt.Fprintf(&b, "Application %s/%s (Argo CD says: sync %s, health %s; checked in %s)\n",
		a.Namespace, a.Name, orNone(a.SyncStatus), orNone(a.HealthStatus), took.Round(time.Millisecond))
	glanceCommit(&b, r)
	glanceImages(&b, r)
	fmt.Fprintf(&b, "  objects    managed %d", r.Managed)
	if r.ExpectedObjs >= 0 {
		fmt.Fprintf(&b, ", expected %d (%s)%s", r.ExpectedObjs, r.Expect.RenderFrom, mark(r.Managed == r.ExpectedObjs))
	}
	b.WriteString("\n")
	if len(r.Unhealthy) == 0 {
		b.WriteString("  health     no object reports a problem\n")
	} else {
		fmt.Fprintf(&b, "  health     %d problem(s):\n", len(r.Unhealthy))
		for _, u := range r.Unhealthy {
			state := "failing"
			if u.Problem.Settling {
				state = "not settled"
			}
			fmt.Fprintf(&b, "             %s %s (%s): %s\n", u.Ref, u.Problem.Path, state, u.Problem.Message)
		}
	}
	b.WriteString("\n")
	_, _ = io.WriteString(w, b.String())
}

func glanceCommit(b *strings.Builder, r *live.Result) {
	synced := "(never synced)"
	if len(r.App.Revisions) > 0 {
		synced = strings.Join(r.App.Revisions, ", ")
	}
	fmt.Fprintf(b, "  commit     synced   %s\n", synced)
	if r.Expect.Revision == "" {
		b.WriteString("             expected (none given: --revision SHA or --git DIR)\n")
		return
	}
	fmt.Fprintf(b, "             expected %s (%s)%s\n", r.Expect.Revision, r.Expect.RevisionFrom, mark(r.RevisionOK))
}

func glanceImages(b *strings.Builder, r *live.Result) {
	fmt.Fprintf(b, "  images     expected, from %s:\n", r.ImagesFrom)
	if len(r.Expected) == 0 {
		b.WriteString("               (none)\n")
	}
	for _, e := range r.Expected {
		state := fmt.Sprintf("running in %d pod(s)", len(e.Pods))
		switch {
		case len(e.Pods) == 0 && e.MustRun:
			state = "NOT RUNNING"
		case len(e.Pods) == 0:
			state = "no pod now (Job, CronJob or 0 replicas)"
		}
		fmt.Fprintf(b, "               %s  %s\n", e.Ref, state)
	}
	if len(r.Unexpected) == 0 {
		return
	}
	b.WriteString("             running, NOT expected:\n")
	for _, u := range r.Unexpected {
		ref := u.Ref
		if u.Digest != "" && !strings.Contains(ref, "@") {
			ref += " (" + u.Digest + ")"
		}
		fmt.Fprintf(b, "               %s  in %d pod(s) of %s\n", ref, len(u.Pods), u.Workload)
	}
}

func mark(ok bool) string {
	if ok {
		return "  ok"
	}
	return "  MISMATCH"
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
