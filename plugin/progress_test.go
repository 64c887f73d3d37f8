package plugin

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a strings.Builder the progress goroutine may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProgressQuiet: on a terminal the progress line appears after a
// second; -q silences it.
func TestProgressQuiet(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		var errb syncBuffer
		prog := progress(Streams{Err: &errb, ErrIsTTY: true}, &options{quiet: quiet})
		prog("rendering 3/12: overlays/prod")
		time.Sleep(1500 * time.Millisecond)
		prog("")
		got := errb.String()
		if shown := strings.Contains(got, "rendering 3/12: overlays/prod"); shown == quiet {
			t.Errorf("quiet %v: progress on stderr %q", quiet, got)
		}
	}
}
