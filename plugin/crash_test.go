package plugin

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A crash is no verdict (3), never Go's exit code 2 (usage): one line,
// and the stack only with --debug.
func TestCrashIsNoVerdict(t *testing.T) {
	var out, errb bytes.Buffer
	s := Streams{In: panicReader{}, Out: &out, Err: &errb}
	if code := Run(context.Background(), []string{"check", "-f", "-"}, s, "test"); code != ExitNoVerdict {
		t.Fatalf("exit %d, want 3; stderr %s", code, errb.String())
	}
	if strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "NO VERDICT: internal error: boom") {
		t.Errorf("want one line naming the crash, got %q", errb.String())
	}
	errb.Reset()
	if code := Run(context.Background(), []string{"check", "--debug", "-f", "-"}, s, "test"); code != ExitNoVerdict {
		t.Fatalf("--debug: exit %d, want 3", code)
	}
	if !strings.Contains(errb.String(), "goroutine") {
		t.Errorf("--debug should print the stack, got %q", errb.String())
	}
}

// panicReader stands in for a bug anywhere on the run's path: no real
// input makes the gate panic any more (the YAML reader's known panics are
// recovered in package stream), so this is the only way to test the net.
type panicReader struct{}

func (panicReader) Read([]byte) (int, error) { panic("boom") }
