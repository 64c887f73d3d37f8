package resolve

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// breakerCooldown is how long a registry host that exhausted its retries is
// failed fast. Without it, 400 images on a registry that answers 500 would
// each spend the full retry budget (8 at a time), turning a one-second
// verdict into a minute of hammering a registry that is already down.
const breakerCooldown = 30 * time.Second

// breaker fails requests to a host fast for a while after a request to that
// host gave up retrying. Fail-closed: the images affected get an Unavailable
// answer naming the first failure.
type breaker struct {
	mu   sync.Mutex
	open map[string]tripped
}

type tripped struct {
	until time.Time
	cause string
}

// hostDownError is the answer for requests to a host whose breaker is open.
type hostDownError struct {
	host  string
	cause string
}

func (e *hostDownError) Error() string {
	return fmt.Sprintf("registry %s unavailable, not retried: an earlier request gave up after retries (%s)", e.host, e.cause)
}

func newBreaker() *breaker { return &breaker{open: map[string]tripped{}} }

func (b *breaker) check(host string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.open[host]
	if !ok {
		return nil
	}
	if time.Now().After(t.until) {
		delete(b.open, host)
		return nil
	}
	return &hostDownError{host: host, cause: t.cause}
}

func (b *breaker) trip(host string, resp *http.Response, err error) {
	cause := "no response"
	switch {
	case err != nil:
		cause = err.Error()
	case resp != nil:
		cause = resp.Status
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.open[host]; !ok {
		b.open[host] = tripped{until: time.Now().Add(breakerCooldown), cause: cause}
	}
}
