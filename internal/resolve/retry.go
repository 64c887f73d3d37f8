package resolve

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// Backoff between attempts: base·2ⁿ, capped, with "equal jitter" (half fixed,
// half random) so that parallel look-ups do not retry in lock-step.
const (
	backoffBase = 200 * time.Millisecond
	backoffCap  = 5 * time.Second
)

// retrier retries one HTTP request on 408, 429, 5xx (except 501) and
// connection resets, waiting as Retry-After says when the registry says so,
// and never waiting past the request context's deadline. It replaces
// go-containerregistry's own retry transport, which ignores Retry-After.
type retrier struct {
	next    http.RoundTripper
	retries int
	timeout time.Duration // per attempt
	breaker *breaker
	stats   *counters
}

func (t *retrier) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	if err := t.breaker.check(host); err != nil {
		return nil, err
	}
	for n := 0; ; n++ {
		resp, err := attempt(t.next, req, n, t.timeout)
		if !retryable(req, resp, err) {
			return resp, err
		}
		wait := t.delay(n, resp)
		if n >= t.retries || !t.fits(req.Context(), wait) {
			t.breaker.trip(host, resp, err)
			return resp, err
		}
		discard(resp)
		if err := sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		t.stats.retries.Add(1)
	}
}

// retryable reports whether an attempt failed in a way worth another try.
// An ended request context is final; a timed-out attempt is not.
func retryable(req *http.Request, resp *http.Response, err error) bool {
	if req.Context().Err() != nil {
		return false
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	if err != nil {
		return transientNetError(err)
	}
	return retryableStatus(resp.StatusCode)
}

func retryableStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code == http.StatusNotImplemented, code == http.StatusHTTPVersionNotSupported:
		return false
	}
	return code >= 500 && code <= 599
}

// transientNetError: a reset or dropped connection, or an attempt that hit
// its own timeout. A refused connection is not retried: nothing listens.
func transientNetError(err error) bool {
	var ne net.Error
	return errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// delay is how long to wait before attempt n+1: Retry-After when the
// response carries one, else jittered exponential backoff.
func (t *retrier) delay(n int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return d
		}
	}
	d := min(backoffBase<<min(n, 16), backoffCap)
	return d/2 + rand.N(d/2+1)
}

// retryAfter parses a Retry-After value: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// fits reports whether waiting d still leaves the request context time to
// try again. Otherwise the last answer is returned at once.
func (t *retrier) fits(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return !ok || time.Now().Add(d).Before(deadline)
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
