package resolve

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Every failure must give a typed answer for every reference, and the call
// must end in bounded time: the gate fails closed, it does not hang.
func TestFailClosed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		mws     []middleware
		opts    Options
		host    func(t testing.TB) string // overrides the registry host
		kind    ErrorKind
		msg     string // in every message
		atLeast time.Duration
		within  time.Duration
	}{
		{name: "500 forever", mws: []middleware{onManifests(status(500, ""))},
			kind: Unavailable, msg: "500", within: 3 * time.Second},
		{name: "429 forever honours Retry-After", mws: []middleware{onManifests(status(429, "1"))},
			opts: Options{Retries: 2}, kind: Unavailable, msg: "429", atLeast: 2 * time.Second, within: 4 * time.Second},
		{name: "429 with Retry-After past the deadline gives up at once", mws: []middleware{onManifests(status(429, "30"))},
			opts: Options{Timeout: 3 * time.Second}, kind: Unavailable, msg: "429", within: time.Second},
		{name: "401 wrong password", mws: []middleware{requireBasic("ci", "right")},
			opts: Options{Keychain: keychain{}}, kind: Unauthorized, msg: "401", within: time.Second},
		{name: "hanging registry, overall deadline", mws: []middleware{onManifests(hang)},
			opts: Options{Timeout: 2 * time.Second}, kind: Timeout, msg: "gave up after 2", atLeast: 2 * time.Second, within: 3 * time.Second},
		{name: "hanging registry, per-request timeout", mws: []middleware{onManifests(hang)},
			opts: Options{RequestTimeout: 300 * time.Millisecond, Retries: 1}, kind: Timeout, msg: "300ms request timeout", within: 2 * time.Second},
		{name: "connection refused", host: closedHost, kind: Unavailable, msg: "connection refused", within: time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := newRegistry(t, c.mws...)
			tr.pushImage(t, "app:1")
			host := tr.host
			if c.host != nil {
				host = c.host(t)
				c.opts.Insecure = []string{host}
			}
			refs := []string{host + "/app:1", host + "/app:2", host + "/other:1"}
			r := newResolver(t, tr, c.opts)

			start := time.Now()
			got := r.Resolve(ctxT(t), refs)
			took := time.Since(start)

			for _, ref := range refs {
				e := wantKind(t, got, ref, c.kind)
				if !strings.HasPrefix(e.Error(), `resolving "`+ref+`": `) {
					t.Errorf("message %q does not start with the action and operand", e)
				}
				if !strings.Contains(e.Error(), c.msg) {
					t.Errorf("message %q does not mention %q", e, c.msg)
				}
			}
			if took < c.atLeast || took > c.within {
				t.Errorf("took %v, want between %v and %v", took, c.atLeast, c.within)
			}
		})
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t, failFirst(2, http.StatusServiceUnavailable))
	d := tr.pushImage(t, "app:1")
	r := newResolver(t, tr, Options{})
	got := r.Resolve(ctxT(t), []string{tr.ref("app:1")})
	wantDigest(t, got, tr.ref("app:1"), d)
	if s := r.Stats(); s.Retries != 2 || s.ManifestRequests != 3 {
		t.Errorf("stats = %+v, want 2 retries and 3 manifest requests", s)
	}
}

func TestRetriesConnectionReset(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t, resetFirst(2))
	d := tr.pushImage(t, "app:1")
	r := newResolver(t, tr, Options{})
	got := r.Resolve(ctxT(t), []string{tr.ref("app:1")})
	wantDigest(t, got, tr.ref("app:1"), d)
	if s := r.Stats(); s.Retries < 1 {
		t.Errorf("stats = %+v, want the reset retried", s)
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	r := newResolver(t, tr, Options{})
	refs := []string{tr.ref("app:1"), tr.ref("app:2")}
	got := r.Resolve(ctx, refs)
	for _, ref := range refs {
		wantKind(t, got, ref, Canceled)
	}
	if n := tr.requests.Load(); n != 0 {
		t.Errorf("%d requests after cancellation, want 0", n)
	}
}

// After one look-up spends its retries on a failing registry, the others for
// that registry fail fast instead of each spending the same budget.
func TestFailingRegistryIsNotHammered(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t, onManifests(status(503, "")))
	refs := []string{tr.ref("a:1"), tr.ref("b:1"), tr.ref("c:1"), tr.ref("d:1"), tr.ref("e:1")}
	r := newResolver(t, tr, Options{Jobs: 1})

	start := time.Now()
	got := r.Resolve(ctxT(t), refs)

	for _, ref := range refs {
		t.Log(wantKind(t, got, ref, Unavailable))
	}
	if n := tr.manifests.Load(); n != 4 {
		t.Errorf("manifest requests = %d, want 4 (one look-up: 1 try + 3 retries)", n)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v", took)
	}
}

// Plain HTTP goes only to hosts listed as insecure, even on loopback, where
// go-containerregistry on its own would fall back to HTTP.
func TestPlainHTTPOnlyToListedHosts(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	tr.pushImage(t, "app:1")
	r, err := New(Options{Keychain: keychain{}})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Resolve(ctxT(t), []string{tr.ref("app:1")})
	e := wantKind(t, got, tr.ref("app:1"), Unavailable)
	if !strings.Contains(e.Error(), "plain HTTP to "+tr.host+" refused") {
		t.Errorf("error %q does not say plain HTTP was refused", e)
	}
	if n := tr.manifests.Load(); n != 0 {
		t.Errorf("%d manifest requests reached the registry, want 0", n)
	}
}

func TestTimeoutIsNotKept(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t, slowManifests(300*time.Millisecond))
	d := tr.pushImage(t, "app:1")
	r := newResolver(t, tr, Options{})
	short, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
	defer cancel()
	got := r.Resolve(short, []string{tr.ref("app:1")})
	wantKind(t, got, tr.ref("app:1"), Timeout)

	// The caller's deadline ended that answer; a later call asks again.
	got = r.Resolve(ctxT(t), []string{tr.ref("app:1")})
	wantDigest(t, got, tr.ref("app:1"), d)
}
