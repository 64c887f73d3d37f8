package live

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Probe reads the cluster once and judges what it read: one `status` run.
// An error that Transient accepts is retried by Wait; any other ends it.
type Probe func(ctx context.Context) (*Result, error)

// WaitOptions tune Wait. The zero value polls after 1 s, then half as
// long again after every read that saw no change, up to 10 s.
type WaitOptions struct {
	// Interval is the pause after a read whose outcome changed (and after
	// the first read); MaxInterval caps the growth.
	Interval, MaxInterval time.Duration
	// Progress, when set, is called after every read.
	Progress func(Attempt)
}

// Attempt is one read of the cluster during Wait.
type Attempt struct {
	// N counts reads from 1.
	N int
	// Result is the judged state; nil when the read failed.
	Result *Result
	// Err is why the read failed; it was transient, so Wait retries.
	Err error
	// Elapsed is the time since Wait began.
	Elapsed time.Duration
	// Next is the pause before the next read.
	Next time.Duration
}

// Waited is how a wait ended.
type Waited struct {
	// Converged is true when done accepted a result.
	Converged bool
	// Last is the last judged state (nil when no read succeeded); LastErr
	// is the error of the last read when that one failed (the cluster was
	// unreachable at the end).
	Last    *Result
	LastErr error
	// Reads counts every finished read; Failed those that failed in a row
	// at the end, and FailingSince when the first of them began.
	Reads, Failed int
	FailingSince  time.Time
}

// Wait reads and judges the app with probe until done accepts a result,
// the context ends, or probe fails with an error that waiting cannot fix
// (Transient false: not found, forbidden, an Application deploying to a
// cluster no reader reaches). The pause between reads grows while the
// outcome stays the same and shrinks back when it changes, so a rollout in
// progress is followed closely and a stuck one costs the API server little.
//
// When ctx ends Wait returns the state so far and ctx's cause; a read cut
// short by ctx does not count: the last answer the cluster gave stands.
func Wait(ctx context.Context, probe Probe, done func(*Result) bool, opts WaitOptions) (Waited, error) {
	opts.defaults()
	began := time.Now()
	var w Waited
	pause, lastKey := opts.Interval, ""
	for {
		readAt := time.Now()
		res, err := probe(ctx)
		if ctx.Err() != nil {
			return w, context.Cause(ctx)
		}
		w.Reads++
		key := ""
		switch {
		case err != nil && !Transient(err):
			return w, err
		case err != nil:
			if w.Failed == 0 {
				w.FailingSince = readAt
			}
			w.Failed++
			w.LastErr, key = err, "error"
		default:
			w.Last, w.LastErr, w.Failed = res, nil, 0
			if done(res) {
				w.Converged = true
				return w, nil
			}
			key = res.pendingKey()
		}
		if key != lastKey {
			pause = opts.Interval
		} else {
			pause = min(pause*3/2, opts.MaxInterval)
		}
		lastKey = key
		if opts.Progress != nil {
			opts.Progress(Attempt{N: w.Reads, Result: res, Err: err, Elapsed: time.Since(began), Next: pause})
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return w, context.Cause(ctx)
		case <-t.C:
		}
	}
}

func (o *WaitOptions) defaults() {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.MaxInterval < o.Interval {
		o.MaxInterval = max(10*time.Second, o.Interval)
	}
}

// pendingKey identifies what a result still waits for, to tell a change
// from the same state read again.
func (r *Result) pendingKey() string {
	var b []byte
	for _, f := range r.Findings {
		b = append(b, f.Rule...)
		b = append(b, f.Message...)
		b = append(b, 0)
	}
	return string(b)
}

// Transient reports whether a read error may go away by itself: the API
// server unreachable, restarting, overloaded or slow. Waiting cannot fix
// the rest (not found, forbidden, unauthorized, a kind that is not served).
func Transient(err error) bool {
	var netErr net.Error
	switch {
	case err == nil:
		return false
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err):
		return true
	case errors.As(err, &netErr), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.Is(err, context.DeadlineExceeded):
		// client-go's per-request timeout (rest.Config.Timeout); the
		// wait's own deadline is told apart by the caller's ctx.
		return true
	}
	return false
}
