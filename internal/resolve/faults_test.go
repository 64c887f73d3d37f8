package resolve

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// Faults are middlewares for the test registry's pull server: the edge cases
// a real registry cannot be asked to produce on demand.

// onManifests applies fault to manifest requests only; the rest pass.
func onManifests(fault http.HandlerFunc) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isManifestPath(r.URL.Path) {
				fault(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// status answers code (with Retry-After when set).
func status(code int, retryAfter string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
	}
}

// hang blocks until the client goes away.
func hang(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// failFirst answers code to the first n manifest requests, then serves.
func failFirst(n int64, code int) middleware {
	var seen atomic.Int64
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isManifestPath(r.URL.Path) && seen.Add(1) <= n {
				w.WriteHeader(code)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// resetFirst resets the TCP connection (RST, no response) on the first n
// manifest requests, then serves.
func resetFirst(n int64) middleware {
	var seen atomic.Int64
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !isManifestPath(r.URL.Path) || seen.Add(1) > n {
				next.ServeHTTP(w, r)
				return
			}
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		})
	}
}

// slowManifests adds d to every manifest request.
func slowManifests(d time.Duration) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isManifestPath(r.URL.Path) {
				time.Sleep(d)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// stripHeadDigest removes Docker-Content-Digest from HEAD responses, as some
// registries and proxies do.
func stripHeadDigest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w = noDigestWriter{w}
		}
		next.ServeHTTP(w, r)
	})
}

type noDigestWriter struct{ http.ResponseWriter }

func (w noDigestWriter) WriteHeader(code int) {
	w.Header().Del("Docker-Content-Digest")
	w.ResponseWriter.WriteHeader(code)
}

// requireBasic demands HTTP basic auth user:pass on every /v2/ request.
func requireBasic(user, pass string) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// closedHost returns a loopback host:port where nothing listens.
func closedHost(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(http.NotFoundHandler())
	host := hostOf(s)
	s.Close()
	return host
}
