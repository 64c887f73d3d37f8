package stop_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// TestStopNamesWhatWasRunningAndDropsLateOutput: a stopped run names what
// it was doing, writes nothing after, and may no longer commit.
func TestStopNamesWhatWasRunningAndDropsLateOutput(t *testing.T) {
	ctx, st, cancel := stop.Start(context.Background())
	defer cancel(nil)
	var out bytes.Buffer
	w := st.Writer(&out)
	end := stop.Doing(ctx, "rendering overlays/prod")
	done := stop.Doing(ctx, "reading -f a.yaml")
	done()
	defer stop.SetDeadline(ctx, time.Millisecond)()
	<-ctx.Done()
	reason, ok := st.Stop(context.Cause(ctx))
	if !ok || reason != "rendering overlays/prod: --timeout 1ms exceeded" {
		t.Errorf("reason %q (ok %v), want what was still running and the deadline", reason, ok)
	}
	end()
	_, _ = w.Write([]byte("PASS\n"))
	if out.Len() != 0 {
		t.Errorf("a stopped run must write nothing, wrote %q", out.String())
	}
	if stop.Commit(ctx) {
		t.Error("a stopped run must not commit")
	}
}

// TestCommittedRunIsWaitedFor: once committed, Stop leaves the run to
// finish its write.
func TestCommittedRunIsWaitedFor(t *testing.T) {
	ctx, st, cancel := stop.Start(context.Background())
	defer cancel(nil)
	if !stop.Commit(ctx) {
		t.Fatal("commit")
	}
	if _, ok := st.Stop(errors.New("interrupted")); ok {
		t.Error("a committed run must be waited for")
	}
	// Without a State nothing is recorded and every commit succeeds.
	stop.Doing(context.Background(), "x")()
	if !stop.Commit(context.Background()) {
		t.Error("a run without a State must commit")
	}
	if err := stop.Recovered("boom"); err == nil || !strings.Contains(err.Error(), "internal error: boom") {
		t.Errorf("Recovered: %v", err)
	}
}
