package plugin

import (
	"context"
	"fmt"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// SignalError is the cause of a run that a signal stopped (internal/stop).
type SignalError = stop.SignalError

// stopGrace is how long Run waits, once the run's context has ended, for
// the command to finish on its own: what honours the context (registry
// look-ups, policy tools) unwinds at once and the report names each
// unresolved image. What does not (a render) is given up on after it.
const stopGrace = 500 * time.Millisecond

// runStoppable runs a command on its own goroutine and returns its exit
// code, or exit 3 as soon as ctx ends (a signal, the deadline), printing
// what was still running (internal/stop). A panic on the command's
// goroutine is a crash report.
func runStoppable(ctx context.Context, s Streams, withStack bool, run func(context.Context, Streams) int) int {
	ctx, st, cancel := stop.Start(ctx)
	defer cancel(nil)
	// Temporary worktrees (and anything else registered with stop.OnExit)
	// go on every path out: a result, a crash, a signal, the deadline.
	defer st.Exit()
	inner := s
	inner.Out, inner.Err = st.Writer(s.Out), st.Writer(s.Err)
	if s.reportErr != nil {
		inner.reportErr = st.Writer(s.reportErr)
	}
	done := make(chan int, 1)
	go func() {
		defer func() {
			if pe, ok := stop.Recovered(recover()).(*stop.PanicError); ok {
				done <- crashReport(inner, pe, withStack)
			}
		}()
		done <- run(ctx, inner)
	}()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	select {
	case code := <-done:
		return code
	case <-time.After(stopGrace):
	}
	reason, ok := st.Stop(context.Cause(ctx))
	if !ok {
		return <-done
	}
	// The reason names inputs (a directory, an Application): escaped, it
	// stays one line that no CI reads as a command.
	fmt.Fprintf(s.Err, "kubectl gate: NO VERDICT: %s\n", report.Escape(reason))
	return ExitNoVerdict
}
