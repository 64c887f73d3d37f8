package resolve

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// headerWriter rewrites one response header just before the status line,
// after the in-process registry set it: a registry or mirror that lies.
type headerWriter struct {
	http.ResponseWriter
	key, value string
}

func (w headerWriter) WriteHeader(code int) {
	if code == http.StatusOK {
		w.Header().Set(w.key, w.value)
	}
	w.ResponseWriter.WriteHeader(code)
}

// lying sets header key to value on manifest answers to method ("" = any).
func lying(method, key, value string) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isManifestPath(r.URL.Path) && (method == "" || r.Method == method) {
				w = headerWriter{ResponseWriter: w, key: key, value: value}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// A HEAD that labels a multi-arch index as an image must not get the index
// pinned under --platform: the body decides, and the child is pinned.
func TestPlatformNeverPinsAnIndexLabelledAsImage(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t, lying(http.MethodHead, "Content-Type", string(types.DockerManifestSchema2)))
	idx, children := tr.pushIndex(t, "multi:1", "linux/amd64", "linux/arm64")
	r := newResolver(t, tr, Options{Platform: "linux/arm64"})
	got := r.Resolve(ctxT(t), []string{tr.ref("multi:1")})
	wantDigest(t, got, tr.ref("multi:1"), children["linux/arm64"])
	if got[tr.ref("multi:1")].Digest == idx {
		t.Fatal("the index digest was pinned")
	}
}

// A GET whose Content-Type contradicts the body's mediaType is no answer.
func TestContentTypeDisagreeingWithBodyIsInconsistent(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t, lying(http.MethodGet, "Content-Type", string(types.DockerManifestSchema2)))
	tr.pushIndex(t, "multi:1", "linux/amd64", "linux/arm64")
	r := newResolver(t, tr, Options{Platform: "linux/amd64"})
	got := r.Resolve(ctxT(t), []string{tr.ref("multi:1")})
	e := wantKind(t, got, tr.ref("multi:1"), Inconsistent)
	if !strings.Contains(e.Error(), tr.host) || !strings.Contains(e.Error(), "mediaType") {
		t.Errorf("message should name the registry and the disagreement: %v", e)
	}
}

// A Content-Type that is not a manifest's is refused, HEAD or GET.
func TestNonManifestContentTypeIsInconsistent(t *testing.T) {
	t.Parallel()
	for _, method := range []string{http.MethodHead, http.MethodGet} {
		tr := newRegistry(t, lying(method, "Content-Type", "text/html"))
		tr.pushImage(t, "app:1")
		opts := Options{}
		if method == http.MethodGet {
			opts.Platform = "linux/amd64"
		}
		r := newResolver(t, tr, opts)
		got := r.Resolve(ctxT(t), []string{tr.ref("app:1")})
		e := wantKind(t, got, tr.ref("app:1"), Inconsistent)
		if !strings.Contains(e.Error(), `"text/html"`) || !strings.Contains(e.Error(), tr.host) {
			t.Errorf("%s: message should name the Content-Type and registry: %v", method, e)
		}
	}
}

// A digest header the body does not hash to is never trusted.
func TestDigestHeaderDisagreeingWithBodyIsInconsistent(t *testing.T) {
	t.Parallel()
	forged := "sha256:" + strings.Repeat("ab", 32)
	tr := newRegistry(t, stripHeadDigest, lying(http.MethodGet, "Docker-Content-Digest", forged))
	tr.pushImage(t, "app:1")
	for _, opts := range []Options{{}, {Platform: "linux/amd64"}} {
		r := newResolver(t, tr, opts)
		got := r.Resolve(ctxT(t), []string{tr.ref("app:1")})
		e := wantKind(t, got, tr.ref("app:1"), Inconsistent)
		if !strings.Contains(e.Error(), forged) || !strings.Contains(e.Error(), "hashes to") {
			t.Errorf("platform %q: message should show both digests: %v", opts.Platform, e)
		}
	}
}

// The honest registry still answers with the same number of requests.
func TestIntegrityCostsNoExtraRequest(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	img := tr.pushImage(t, "app:1")
	r := newResolver(t, tr, Options{})
	got := r.Resolve(ctxT(t), []string{tr.ref("app:1")})
	wantDigest(t, got, tr.ref("app:1"), img)
	if n := tr.manifests.Load(); n != 1 {
		t.Errorf("manifest requests = %d, want 1", n)
	}
}

func FuzzIsIndexBody(f *testing.F) {
	f.Add([]byte(`{"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`))
	f.Add([]byte(`{"schemaVersion":2,"config":{},"layers":[]}`))
	f.Add([]byte(`{"manifests":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = isIndexBody(b)
		_ = bodyMediaType(b)
	})
}

// FuzzPinned feeds the pinning rewrite arbitrary references: what it
// returns is always a valid reference by digest ending in that digest.
func FuzzPinned(f *testing.F) {
	d := "sha256:" + strings.Repeat("0f", 32)
	for _, s := range []string{"nginx", "nginx:1.27", "host:5000/app:v1", "host:5000/app", "a/b@" + d, "x:y@sha256:bad"} {
		f.Add(s, d, true)
		f.Add(s, d, false)
	}
	f.Fuzz(func(t *testing.T, ref, digest string, dropTag bool) {
		out, err := Pinned(ref, digest, dropTag)
		if err != nil {
			return
		}
		if _, err := name.NewDigest(out); err != nil || !strings.HasSuffix(out, "@"+digest) {
			t.Fatalf("Pinned(%q, %q) = %q: %v", ref, digest, out, err)
		}
	})
}
