package resolve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// counters back [Stats]; they are updated from many goroutines.
type counters struct {
	requests         atomic.Int64
	manifestRequests atomic.Int64
	retries          atomic.Int64
	cacheHits        atomic.Int64
	shared           atomic.Int64
	cacheErrors      atomic.Int64
	cacheRejects     atomic.Int64
}

// guard is the bottom of the transport stack, just above the shared
// http.Transport. It sees every request attempt after auth headers are set,
// so it counts them, learns the credentials they carry, and refuses plain
// HTTP to hosts not listed as insecure.
type guard struct {
	next     http.RoundTripper
	insecure map[string]bool
	secrets  *secrets
	stats    *counters
}

// plainHTTPError refuses a plain-HTTP request to a host that is not listed
// in Options.Insecure.
type plainHTTPError struct{ host string }

func (e *plainHTTPError) Error() string {
	return fmt.Sprintf("plain HTTP to %s refused: the host is not listed as an insecure registry", e.host)
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !g.insecure[req.URL.Host] {
		return nil, &plainHTTPError{host: req.URL.Host}
	}
	g.secrets.record(req)
	g.stats.requests.Add(1)
	if isManifestPath(req.URL.Path) {
		g.stats.manifestRequests.Add(1)
	}
	return g.next.RoundTrip(req)
}

func isManifestPath(p string) bool {
	return strings.HasPrefix(p, "/v2/") && strings.Contains(p, "/manifests/")
}

// attempt sends one try of req with its own timeout. The timeout keeps
// running while the caller reads the body and ends when the body is closed.
func attempt(next http.RoundTripper, req *http.Request, n int, timeout time.Duration) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), timeout)
	try := req.Clone(ctx)
	if n > 0 && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			cancel()
			return nil, err
		}
		try.Body = body
	}
	resp, err := next.RoundTrip(try)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && req.Context().Err() == nil {
			err = &requestTimeoutError{timeout: timeout, err: err}
		}
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// requestTimeoutError is an attempt that ran out of its own time
// (Options.RequestTimeout) while the overall deadline still held.
type requestTimeoutError struct {
	timeout time.Duration
	err     error
}

func (e *requestTimeoutError) Error() string {
	return fmt.Sprintf("no response within the %v request timeout: %v", e.timeout, e.err)
}

func (e *requestTimeoutError) Unwrap() error { return e.err }

// cancelBody ends an attempt's context once its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// discard drains a little of a response that will not be used (so the
// connection can be reused) and closes it.
func discard(resp *http.Response) {
	if resp == nil {
		return
	}
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	_ = resp.Body.Close()
}
