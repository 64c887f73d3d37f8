package report

import (
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProgressInALog: nothing before the first interval, then a plain line
// per interval naming what runs, escaped; verbose adds a line per stage
// with its duration; nothing after Stop.
func TestProgressInALog(t *testing.T) {
	var w lockedBuf
	p := newProgress(&w, false, true, 50*time.Millisecond, 50*time.Millisecond)
	p.Set("rendering 1/2: overlays/\x1bprod")
	if w.String() != "" {
		t.Fatalf("printed at once: %q", w.String())
	}
	time.Sleep(130 * time.Millisecond)
	p.Set("checking 1/2: overlays/prod")
	p.Stop()
	out := w.String()
	for _, want := range []string{"kubectl gate: still running after 0s: rendering 1/2: overlays/\\x1bprod\n", "kubectl gate: rendering took ", "kubectl gate: checking took ", "kubectl gate: done in "} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, '\x1b') || strings.Contains(out, "\r") {
		t.Errorf("terminal control in a log:\n%q", out)
	}
	n := len(out)
	time.Sleep(120 * time.Millisecond)
	if len(w.String()) != n {
		t.Error("printed after Stop")
	}
}

// TestProgressOnATerminal: one line redrawn in place, cleared at the end.
func TestProgressOnATerminal(t *testing.T) {
	var w lockedBuf
	p := newProgress(&w, true, false, 20*time.Millisecond, 20*time.Millisecond)
	p.Set("checking 3/12: Application shop")
	time.Sleep(70 * time.Millisecond)
	p.Stop()
	out := w.String()
	if !strings.HasPrefix(out, "\r\x1b[Kchecking 3/12: Application shop (0s)") || !strings.HasSuffix(out, "\r\x1b[K") || strings.Contains(out, "\n") {
		t.Errorf("%q", out)
	}
}
