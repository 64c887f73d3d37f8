package plugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// Stopping a run: one deadline (--timeout) for the whole of check and pin,
// and SIGINT/SIGTERM, end the run within a moment with exit 3, whatever is
// running. Parts of the run take no context (kustomize's krusty, a remote
// resource it fetches, exec functions), so Run does not wait for them: the
// command runs on its own goroutine; when the run's context ends Run waits
// stopGrace for it, then returns naming what was still running, and the
// process exits. Output the
// command writes after that is dropped, and the command commits (commit)
// before it writes its verdict or a file, so an interrupted run never
// prints a pass or a half-checked stream.

// SignalError is the cause of a run that a signal stopped.
type SignalError struct{ Signal os.Signal }

func (e *SignalError) Error() string { return "interrupted by " + signalName(e.Signal) }

func signalName(s os.Signal) string {
	switch s.String() {
	case "interrupt":
		return "SIGINT"
	case "terminated":
		return "SIGTERM"
	}
	return s.String()
}

// deadlineError is the cause of a run whose --timeout passed.
type deadlineError struct{ d time.Duration }

func (e *deadlineError) Error() string { return fmt.Sprintf("--timeout %s exceeded", e.d) }

// runState is what Run and its command share about stopping.
type runState struct {
	cancel context.CancelCauseFunc

	mu        sync.Mutex
	stopped   bool // Run gave up on the command: its output is dropped
	committed bool // the command finished its work and is writing results
	next      int
	doing     map[int]string
}

type stateKey struct{}

func stateOf(ctx context.Context) *runState {
	st, _ := ctx.Value(stateKey{}).(*runState)
	return st
}

// doing records that the run is busy with what ("rendering overlays/prod")
// until the returned func is called; a stopped run names it.
func doing(ctx context.Context, what string) func() {
	st := stateOf(ctx)
	if st == nil {
		return func() {}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	id := st.next
	st.next++
	st.doing[id] = what
	return func() {
		st.mu.Lock()
		delete(st.doing, id)
		st.mu.Unlock()
	}
}

// setDeadline ends the run d from now (--timeout); the returned func
// cancels the deadline.
func setDeadline(ctx context.Context, d time.Duration) func() {
	st := stateOf(ctx)
	if st == nil || d <= 0 {
		return func() {}
	}
	t := time.AfterFunc(d, func() { st.cancel(&deadlineError{d: d}) })
	return func() { t.Stop() }
}

// commit reports whether the command may write its results: false once
// Run has stopped it; after a true Run waits for the command instead of
// stopping it. A command that commits after its context ended must still
// end in no verdict (runner.finish).
func commit(ctx context.Context) bool {
	st := stateOf(ctx)
	if st == nil {
		return true
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stopped {
		return false
	}
	st.committed = true
	return true
}

// stopGrace is how long Run waits, once the run's context has ended, for
// the command to finish on its own: what honours the context (registry
// look-ups, policy tools) unwinds at once and the report names each
// unresolved image. What does not (a render) is given up on after it.
const stopGrace = 500 * time.Millisecond

// stop gives up on the command unless it has committed; it returns the
// reason to print, or ok=false when the command is to be waited for.
func (st *runState) stop(cause error) (reason string, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.committed {
		return "", false
	}
	st.stopped = true
	var busy []string
	for _, w := range st.doing {
		busy = append(busy, w)
	}
	sort.Strings(busy)
	if len(busy) > 3 {
		busy = append(busy[:3], fmt.Sprintf("%d more", len(busy)-3))
	}
	if len(busy) == 0 {
		return cause.Error(), true
	}
	return strings.Join(busy, ", ") + ": " + cause.Error(), true
}

// stoppable is a stream that drops what the command writes once Run has
// given up on it.
type stoppable struct {
	st *runState
	w  io.Writer
}

func (s stoppable) Write(p []byte) (int, error) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if s.st.stopped {
		return len(p), nil
	}
	return s.w.Write(p)
}

// runStoppable runs a command on its own goroutine and returns its exit
// code, or exit 3 as soon as ctx ends (a signal, the deadline), printing
// what was still running. A panic on the command's goroutine is a crash
// report.
func runStoppable(ctx context.Context, s Streams, withStack bool, run func(context.Context, Streams) int) int {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	st := &runState{cancel: cancel, doing: map[int]string{}}
	ctx = context.WithValue(ctx, stateKey{}, st)
	inner := s
	inner.Out, inner.Err = stoppable{st: st, w: s.Out}, stoppable{st: st, w: s.Err}
	done := make(chan int, 1)
	go func() {
		defer func() {
			if pe, ok := recovered(recover()).(*PanicError); ok {
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
	reason, ok := st.stop(context.Cause(ctx))
	if !ok {
		return <-done
	}
	fmt.Fprintf(s.Err, "kubectl gate: NO VERDICT: %s\n", reason)
	return ExitNoVerdict
}
