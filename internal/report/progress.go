package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress tells a person waiting on a run what it is doing, on stderr
// (never stdout, which carries the report or the pinned render):
//
//   - on a terminal, a live line once the run is older than TTYDelay: the
//     stage, N of M units and the current one, redrawn in place;
//   - elsewhere (CI logs), one plain line every PlainEvery while the run
//     goes on, so a long render is not minutes of silence;
//   - with verbose, a line per stage as it ends, with its duration.
//
// The run reports with Set ("rendering 3/12: overlays/prod"); the word
// before the first space is the stage. Stop ends it and clears the line.
type Progress struct {
	w        io.Writer
	tty      bool
	verbose  bool
	start    time.Time
	now      func() time.Time
	mu       sync.Mutex
	msg      string
	stage    string
	stageAt  time.Time
	shown    bool // a live line is on the terminal
	stop     chan struct{}
	stopOnce sync.Once
}

// Delays of the two progress forms: a terminal's line appears after
// ttyDelay and is redrawn every ttyEvery; a log gets a line every
// plainEvery.
const (
	ttyDelay   = time.Second
	ttyEvery   = 200 * time.Millisecond
	plainEvery = 10 * time.Second
)

// NewProgress starts a progress reporter writing to w; tty says whether w
// is a terminal.
func NewProgress(w io.Writer, tty, verbose bool) *Progress {
	if tty {
		return newProgress(w, tty, verbose, ttyDelay, ttyEvery)
	}
	return newProgress(w, tty, verbose, plainEvery, plainEvery)
}

func newProgress(w io.Writer, tty, verbose bool, delay, every time.Duration) *Progress {
	p := &Progress{w: w, tty: tty, verbose: verbose, now: time.Now, stop: make(chan struct{})}
	p.start = p.now()
	p.stageAt = p.start
	go p.loop(delay, every)
	return p
}

func (p *Progress) loop(delay, every time.Duration) {
	select {
	case <-p.stop:
		return
	case <-time.After(delay):
	}
	p.tick()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.tick()
		}
	}
}

func (p *Progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.msg == "" {
		return
	}
	elapsed := p.now().Sub(p.start).Round(time.Second)
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s (%s)", Escape(p.msg), elapsed)
		p.shown = true
		return
	}
	fmt.Fprintf(p.w, "kubectl gate: still running after %s: %s\n", elapsed, Escape(p.msg))
}

// Set reports what the run is doing now; "" says it is between stages.
func (p *Progress) Set(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	stage, _, _ := strings.Cut(msg, " ")
	stage = strings.TrimRight(stage, ":")
	if stage != p.stage {
		p.endStage()
		p.stage, p.stageAt = stage, p.now()
	}
	p.msg = msg
}

// endStage prints the stage that ended, with its duration, under verbose.
func (p *Progress) endStage() {
	if !p.verbose || p.stage == "" {
		return
	}
	p.clear()
	fmt.Fprintf(p.w, "kubectl gate: %s took %s\n", Escape(p.stage), p.now().Sub(p.stageAt).Round(time.Millisecond))
}

func (p *Progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// Stop ends the reporter: the last stage's timing under verbose, and a
// clean line on a terminal. It may be called more than once.
func (p *Progress) Stop() {
	p.stopOnce.Do(func() {
		close(p.stop)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.endStage()
		p.stage, p.msg = "", ""
		p.clear()
		if p.verbose {
			fmt.Fprintf(p.w, "kubectl gate: done in %s\n", p.now().Sub(p.start).Round(time.Millisecond))
		}
	})
}
