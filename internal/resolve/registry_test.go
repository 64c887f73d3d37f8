package resolve

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"
)

// testRegistry is go-containerregistry's in-process registry served twice
// on loopback over plain HTTP: a clean server that tests push through, and a
// pull server whose handler is wrapped to count requests and inject faults.
// Both serve the same storage.
type testRegistry struct {
	// host is the pull server's "127.0.0.1:port", the host resolvers ask.
	host     string
	pushHost string
	// manifests counts manifest requests (HEAD and GET) reaching the pull server.
	manifests atomic.Int64
	// requests counts every request reaching the pull server.
	requests atomic.Int64
}

// middleware wraps the pull server's handler; the first one is outermost.
type middleware func(http.Handler) http.Handler

func newRegistry(t testing.TB, mws ...middleware) *testRegistry {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	push := httptest.NewServer(reg)
	t.Cleanup(push.Close)
	tr := &testRegistry{pushHost: hostOf(push)}
	var h http.Handler = reg
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	pull := httptest.NewServer(tr.count(h))
	t.Cleanup(pull.Close)
	tr.host = hostOf(pull)
	return tr
}

func hostOf(s *httptest.Server) string {
	return strings.TrimPrefix(s.URL, "http://")
}

func (tr *testRegistry) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.requests.Add(1)
		if isManifestPath(r.URL.Path) {
			tr.manifests.Add(1)
		}
		next.ServeHTTP(w, r)
	})
}

// ref names repo:tag (or repo@digest) on the pull server.
func (tr *testRegistry) ref(s string) string { return tr.host + "/" + s }

// pushImage pushes a random image to repo:tag and returns its digest.
func (tr *testRegistry) pushImage(t testing.TB, repoTag string) string {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tr.pushRef(t, repoTag), img); err != nil {
		t.Fatalf("pushing %s: %v", repoTag, err)
	}
	return digestOf(t, img)
}

// pushIndex pushes a multi-arch index with one random image per platform
// and returns the index digest and each platform's child digest.
func (tr *testRegistry) pushIndex(t testing.TB, repoTag string, platforms ...string) (string, map[string]string) {
	t.Helper()
	var idx v1.ImageIndex = empty.Index
	children := map[string]string{}
	for _, p := range platforms {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: plat}})
		children[p] = digestOf(t, img)
	}
	if err := remote.WriteIndex(tr.pushRef(t, repoTag), idx); err != nil {
		t.Fatalf("pushing %s: %v", repoTag, err)
	}
	return digestOf(t, idx), children
}

// pushImages pushes a distinct image to each repo:tag, 8 at a time, and
// returns the digests by repo:tag. The images share their blobs and differ
// in a manifest annotation, so pushing many is cheap.
func (tr *testRegistry) pushImages(t testing.TB, repoTags []string) map[string]string {
	t.Helper()
	base, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(repoTags))
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(8)
	for _, rt := range repoTags {
		img := mutate.Annotations(base, map[string]string{"test.name": rt}).(v1.Image)
		d := digestOf(t, img)
		g.Go(func() error {
			mu.Lock()
			out[rt] = d
			mu.Unlock()
			return remote.Write(tr.pushRef(t, rt), img)
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("pushing: %v", err)
	}
	return out
}

func (tr *testRegistry) pushRef(t testing.TB, repoTag string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(tr.pushHost+"/"+repoTag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func digestOf(t testing.TB, d interface{ Digest() (v1.Hash, error) }) string {
	t.Helper()
	h, err := d.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// keychain is a fixed keychain: credentials by registry host, else anonymous.
// Tests use it instead of authn.DefaultKeychain so that the machine's own
// docker config never leaks in.
type keychain map[string]authn.Authenticator

func (k keychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	if a, ok := k[res.RegistryStr()]; ok {
		return a, nil
	}
	return authn.Anonymous, nil
}

// testCacheKey signs test caches.
var testCacheKey = []byte("kubectl-gate test cache key")

// newResolver builds a Resolver for tr with test-friendly defaults.
func newResolver(t testing.TB, tr *testRegistry, opts Options) *Resolver {
	t.Helper()
	if tr != nil {
		opts.Insecure = append(opts.Insecure, tr.host)
	}
	if opts.Keychain == nil {
		opts.Keychain = keychain{}
	}
	if opts.CacheDir != "" && opts.CacheKey == nil {
		opts.CacheKey = testCacheKey
	}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ctxT is a context for one test call, bounded so that a bug hangs no test.
func ctxT(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
