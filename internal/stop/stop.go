// Package stop is how a run of the gate ends early: one deadline
// (--timeout) for the whole run, and SIGINT/SIGTERM, end it within a moment
// with no verdict, whatever is running. Parts of a run take no context
// (kustomize's krusty, a remote resource it fetches, exec functions), so
// the shell does not wait for them: it runs the command on its own
// goroutine (Start), and when the run's context ends it waits a grace
// period, then gives up on the command (State.Stop), naming what was still
// running (Doing). Output the command writes after that is dropped
// (Writer), and the command commits (Commit) before it writes its verdict
// or a file, so an interrupted run never prints a pass or a half-checked
// stream.
//
// A run without a State (a library caller, a test) is never stopped:
// Doing records nothing and Commit always succeeds.
package stop

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"
)

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

// PanicError is a crash inside the gate: no verdict, never a pass and
// never the usage code (Go's own exit code for a panic is 2).
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("internal error: %v", e.Value)
}

// Recovered turns a recovered panic value into a *PanicError, nil for none:
// defer func() { if err := stop.Recovered(recover()); err != nil { … } }().
func Recovered(r any) error {
	if r == nil {
		return nil
	}
	return &PanicError{Value: r, Stack: debug.Stack()}
}

// State is what the shell and its command share about stopping.
type State struct {
	cancel context.CancelCauseFunc

	mu        sync.Mutex
	stopped   bool // the shell gave up on the command: its output is dropped
	committed bool // the command finished its work and is writing results
	next      int
	doing     map[int]string
	cleanups  []func()
}

type stateKey struct{}

// Start returns a context the shell runs its command with, cancelled (with
// cause) by the returned State's deadline or by the parent, and the State.
// Call cancel when the command is done.
func Start(parent context.Context) (ctx context.Context, st *State, cancel context.CancelCauseFunc) {
	ctx, cancel = context.WithCancelCause(parent)
	st = &State{cancel: cancel, doing: map[int]string{}}
	return context.WithValue(ctx, stateKey{}, st), st, cancel
}

func stateOf(ctx context.Context) *State {
	st, _ := ctx.Value(stateKey{}).(*State)
	return st
}

// Doing records that the run is busy with what ("rendering overlays/prod")
// until the returned func is called; a stopped run names it.
func Doing(ctx context.Context, what string) func() {
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

// OnExit registers f to run when the run ends, however it ends: the
// command returns, fails, crashes, or the shell gives up on it (a signal,
// the deadline) — then f runs while the command may still be busy, so f
// must be safe to call concurrently with it and more than once (a
// temporary worktree's Remove). Without a State (a library caller) the
// caller removes what it made itself.
func OnExit(ctx context.Context, f func()) {
	st := stateOf(ctx)
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cleanups = append(st.cleanups, f)
}

// Exit runs what OnExit registered, last first; the shell calls it on
// every path out of a run.
func (st *State) Exit() {
	st.mu.Lock()
	fs := st.cleanups
	st.cleanups = nil
	st.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// SetDeadline ends the run d from now (--timeout); the returned func
// cancels the deadline.
func SetDeadline(ctx context.Context, d time.Duration) func() {
	st := stateOf(ctx)
	if st == nil || d <= 0 {
		return func() {}
	}
	t := time.AfterFunc(d, func() { st.cancel(&deadlineError{d: d}) })
	return func() { t.Stop() }
}

// Commit reports whether the command may write its results: false once
// the shell has stopped it; after a true the shell waits for the command
// instead of stopping it. A command that commits after its context ended
// must still end in no verdict.
func Commit(ctx context.Context) bool {
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

// Stop gives up on the command unless it has committed; it returns the
// reason to print, or ok=false when the command is to be waited for.
func (st *State) Stop(cause error) (reason string, ok bool) {
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

// Writer is w, dropping what the command writes once the shell has given
// up on it.
func (st *State) Writer(w io.Writer) io.Writer { return stoppable{st: st, w: w} }

type stoppable struct {
	st *State
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
