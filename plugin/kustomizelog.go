package plugin

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"sync"
)

// kustomize warns through the standard log package ("well-defined vars
// that were never replaced"), raw and timestamped, and straight to
// os.Stderr ("# Warning: 'commonLabels' is deprecated"), once per render.
// During check and pin both are collected and printed once each, as
// warning: lines on stderr before the report. The gate's own output goes to
// the Streams it was given (main passes the process's stderr file itself),
// so only what reads os.Stderr when it writes — kustomize — is collected.

// logLines collects what the standard logger writes.
type logLines struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines []string
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.Reset()
			l.buf.WriteString(line) // an unfinished line waits for its end
			break
		}
		if line = strings.TrimSpace(line); line != "" && !slices.Contains(l.lines, line) {
			l.lines = append(l.lines, line)
		}
	}
	return len(p), nil
}

// captureLogs sends the standard logger to a collector until the returned
// func is called, which prints each distinct line once as a warning to w
// (nothing when quiet: --quiet shows no warnings) and restores the logger;
// calls after the first do nothing.
func captureLogs(quiet bool) func(w io.Writer) {
	l := &logLines{}
	prevOut, prevFlags := log.Writer(), log.Flags()
	log.SetOutput(l)
	log.SetFlags(0)
	restoreStderr := captureStderr(l)
	var once sync.Once
	return func(w io.Writer) {
		once.Do(func() {
			restoreStderr()
			if quiet {
				w = io.Discard
			}
			l.flush(w, prevOut, prevFlags)
		})
	}
}

// captureStderr points os.Stderr at a pipe whose lines go to l, until the
// returned func restores it and waits for the last line. Without a pipe
// (the process is out of descriptors) nothing is captured.
func captureStderr(l *logLines) func() {
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	prev := os.Stderr
	os.Stderr = w
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(l, r)
		close(done)
	}()
	return func() {
		os.Stderr = prev
		_ = w.Close()
		<-done
		_ = r.Close()
	}
}

// flush restores the logger and prints the lines collected.
func (l *logLines) flush(w, prevOut io.Writer, prevFlags int) {
	log.SetOutput(prevOut)
	log.SetFlags(prevFlags)
	l.mu.Lock()
	defer l.mu.Unlock()
	if rest := strings.TrimSpace(l.buf.String()); rest != "" && !slices.Contains(l.lines, rest) {
		l.lines = append(l.lines, rest)
	}
	for _, line := range l.lines {
		line = strings.TrimPrefix(line, "# ") // kustomize's "# Warning: …"
		fmt.Fprintf(w, "warning: %s\n", strings.TrimPrefix(strings.TrimPrefix(line, "Warning: "), "warning: "))
	}
}
