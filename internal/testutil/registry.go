package testutil

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is go-containerregistry's real in-process OCI registry on
// loopback, counting manifest requests. Wrap injects faults in front of it.
type Registry struct {
	Host      string
	manifests atomic.Int64
	// Wrap, when set, handles every request first; it may answer itself or
	// call next.
	Wrap func(w http.ResponseWriter, r *http.Request, next http.Handler)
}

// StartRegistry serves a registry until the test ends. It has no OCI
// referrers API: clients fall back to the referrers tag.
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	return startRegistry(t)
}

// StartReferrersRegistry serves a registry with the OCI referrers API
// until the test ends.
func StartReferrersRegistry(t testing.TB) *Registry {
	t.Helper()
	return startRegistry(t, registry.WithReferrersSupport(true))
}

func startRegistry(t testing.TB, opts ...registry.Option) *Registry {
	t.Helper()
	reg := &Registry{}
	inner := registry.New(append([]registry.Option{registry.Logger(log.New(io.Discard, "", 0))}, opts...)...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			reg.manifests.Add(1)
		}
		if reg.Wrap != nil {
			reg.Wrap(w, r, inner)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	reg.Host = strings.TrimPrefix(srv.URL, "http://")
	return reg
}

// ManifestRequests returns how many manifest GET/HEAD requests were served.
func (r *Registry) ManifestRequests() int64 { return r.manifests.Load() }

// ResetCount zeroes the manifest request counter.
func (r *Registry) ResetCount() { r.manifests.Store(0) }

// PushImage pushes a random image as repo:tag and returns its digest.
func (r *Registry) PushImage(t testing.TB, repoTag string) string {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref := r.tag(t, repoTag)
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// PushIndex pushes a random multi-platform index and returns its digest.
func (r *Registry) PushIndex(t testing.TB, repoTag string) string {
	t.Helper()
	idx, err := random.Index(256, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref := r.tag(t, repoTag)
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

func (r *Registry) tag(t testing.TB, repoTag string) name.Tag {
	t.Helper()
	ref, err := name.NewTag(r.Host+"/"+repoTag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}
