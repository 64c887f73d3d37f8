package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gate/kubectl-gate/internal/live"
)

// defaultWaitTimeout is --timeout of `status --wait` when none is given:
// long enough for a rollout with a few pauses, short enough that a stuck
// pipeline fails in a coffee break.
const defaultWaitTimeout = 5 * time.Minute

// waitFor runs `status --wait`: probe until every check passes (exit 0) or
// the deadline passes. At the deadline the last state the cluster answered
// with is reported (exit 1, what was still wrong), unless the cluster was
// unreachable at the end (exit 3): an old answer is not a verdict on now.
// A signal is exit 3, as everywhere.
func (o *statusOptions) waitFor(ctx context.Context, s Streams, probe live.Probe, began time.Time, failOnWarning bool, version string) int {
	p := newWaitProgress(s, failOnWarning)
	w, err := live.Wait(ctx, probe, func(r *live.Result) bool { return len(r.Pending(failOnWarning)) == 0 }, live.WaitOptions{Progress: p.show})
	p.clear()
	var deadline *statusDeadline
	switch {
	case w.Converged:
		return o.report(s, w.Last, time.Since(began), failOnWarning, version)
	case err != nil && !errors.As(err, &deadline):
		// Not found, forbidden, a signal: waiting cannot fix it.
		return noVerdict(s, fmt.Errorf("after %s: %w", waitedFor(w, began), err))
	case w.LastErr != nil:
		return noVerdict(s, fmt.Errorf("%s: the cluster did not answer the last %d read(s) since %s: %w",
			err, w.Failed, w.FailingSince.Format(time.TimeOnly), w.LastErr))
	case w.Last == nil:
		return noVerdict(s, fmt.Errorf("%s before the first read of the cluster finished", err))
	}
	code := o.report(s, w.Last, time.Since(began), failOnWarning, version)
	fmt.Fprintf(s.Err, "kubectl gate status: %s after %s; still waiting for: %s\n",
		err, waitedFor(w, began), strings.Join(w.Last.Pending(failOnWarning), "; "))
	if code == ExitPass { // the verdict said pass while Pending did not: never let that be 0
		code = ExitViolation
	}
	return code
}

// statusDeadline is the cause of a status run whose --timeout passed.
type statusDeadline struct{ d time.Duration }

func (e *statusDeadline) Error() string { return fmt.Sprintf("--timeout %s exceeded", e.d) }

func waitedFor(w live.Waited, began time.Time) string {
	return fmt.Sprintf("%s and %d read(s)", time.Since(began).Round(time.Second), w.Reads)
}

// sourcesKey identifies the sources an Application deploys, so that
// --apps-root renders them again only when they changed.
func sourcesKey(app *unstructured.Unstructured) string {
	spec, _, _ := unstructured.NestedMap(app.Object, "spec")
	b, _ := json.Marshal([]any{spec["source"], spec["sources"]})
	return string(b)
}

// waitProgress is the one-line display of `status --wait` on a terminal: what
// it still waits for, rewritten in place after every read. In a pipe or a
// file it prints nothing: logs get the final report only.
type waitProgress struct {
	w             io.Writer
	width         int
	failOnWarning bool
	shown         bool
}

func newWaitProgress(s Streams, failOnWarning bool) *waitProgress {
	if !s.ErrIsTTY {
		return &waitProgress{}
	}
	width := 80
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 20 {
		width = n
	}
	return &waitProgress{w: s.Err, width: width, failOnWarning: failOnWarning}
}

func (p *waitProgress) show(a live.Attempt) {
	if p.w == nil {
		return
	}
	var what string
	if a.Err != nil {
		what = "cluster unreachable, retrying"
	} else {
		what = strings.Join(a.Result.Pending(p.failOnWarning), "; ")
	}
	line := fmt.Sprintf("waiting %s (read %d, next in %s): %s", a.Elapsed.Round(time.Second), a.N, a.Next.Round(100*time.Millisecond), what)
	if r := []rune(line); len(r) > p.width-1 {
		line = string(r[:p.width-2]) + "…"
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.shown = true
}

// clear removes the progress line before the report is printed.
func (p *waitProgress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
