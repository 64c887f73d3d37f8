package resolve

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/images"
)

func wantDigest(t *testing.T, got map[string]images.Resolution, ref, want string) {
	t.Helper()
	res, ok := got[ref]
	switch {
	case !ok:
		t.Errorf("%s: no answer", ref)
	case res.Err != nil:
		t.Errorf("%s: %v", ref, res.Err)
	case res.Digest != want:
		t.Errorf("%s: digest %s, want %s", ref, res.Digest, want)
	}
}

func wantKind(t *testing.T, got map[string]images.Resolution, ref string, want ErrorKind) *Error {
	t.Helper()
	var e *Error
	if !errors.As(got[ref].Err, &e) {
		t.Fatalf("%s: want a *resolve.Error of kind %v, got %+v", ref, want, got[ref])
	}
	if e.Kind != want || got[ref].Digest != "" {
		t.Errorf("%s: kind %v (digest %q), want %v: %v", ref, e.Kind, got[ref].Digest, want, e)
	}
	if e.Ref != ref {
		t.Errorf("Error.Ref = %q, want %q", e.Ref, ref)
	}
	return e
}

func TestResolveImageAndIndex(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	img := tr.pushImage(t, "app:1")
	idx, _ := tr.pushIndex(t, "multi:1", "linux/amd64", "linux/arm64")
	r := newResolver(t, tr, Options{})

	got := r.Resolve(ctxT(t), []string{tr.ref("app:1"), tr.ref("multi:1")})

	wantDigest(t, got, tr.ref("app:1"), img)
	wantDigest(t, got, tr.ref("multi:1"), idx)
	if n := tr.manifests.Load(); n != 2 {
		t.Errorf("manifest requests = %d, want 2 (one HEAD each)", n)
	}
}

func TestPlatformPicksChild(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	_, children := tr.pushIndex(t, "multi:1", "linux/amd64", "linux/arm64", "linux/arm/v7")
	img := tr.pushImage(t, "single:1")
	r := newResolver(t, tr, Options{Platform: "linux/arm64"})
	got := r.Resolve(ctxT(t), []string{tr.ref("multi:1"), tr.ref("single:1")})
	wantDigest(t, got, tr.ref("multi:1"), children["linux/arm64"])
	wantDigest(t, got, tr.ref("single:1"), img)
	// HEAD for both, plus a GET of the index by digest to read its children.
	if n := tr.manifests.Load(); n != 3 {
		t.Errorf("manifest requests = %d, want 3", n)
	}

	r = newResolver(t, tr, Options{Platform: "linux/arm/v7"})
	got = r.Resolve(ctxT(t), []string{tr.ref("multi:1")})
	wantDigest(t, got, tr.ref("multi:1"), children["linux/arm/v7"])

	r = newResolver(t, tr, Options{Platform: "linux/s390x"})
	got = r.Resolve(ctxT(t), []string{tr.ref("multi:1")})
	wantKind(t, got, tr.ref("multi:1"), NotFound)
}

func TestHeadWithoutDigestFallsBackToGet(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t, stripHeadDigest)
	img := tr.pushImage(t, "app:1")
	idx, children := tr.pushIndex(t, "multi:1", "linux/amd64", "linux/arm64")

	r := newResolver(t, tr, Options{})
	got := r.Resolve(ctxT(t), []string{tr.ref("app:1"), tr.ref("multi:1")})
	wantDigest(t, got, tr.ref("app:1"), img)
	wantDigest(t, got, tr.ref("multi:1"), idx)
	if n := tr.manifests.Load(); n != 4 {
		t.Errorf("manifest requests = %d, want 4 (HEAD + GET each)", n)
	}

	// With a platform, the GET that stood in for HEAD already holds the index.
	tr.manifests.Store(0)
	r = newResolver(t, tr, Options{Platform: "linux/amd64"})
	got = r.Resolve(ctxT(t), []string{tr.ref("multi:1")})
	wantDigest(t, got, tr.ref("multi:1"), children["linux/amd64"])
	if n := tr.manifests.Load(); n != 2 {
		t.Errorf("manifest requests = %d, want 2 (HEAD + GET)", n)
	}
}

func TestEachReferenceLookedUpOnce(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	var tags []string
	for i := range 50 {
		tags = append(tags, fmt.Sprintf("app%d:v%d", i%5, i))
	}
	want := map[string]string{}
	var refs []string
	for tag, d := range tr.pushImages(t, tags) {
		want[tr.ref(tag)] = d
		for range 20 {
			refs = append(refs, tr.ref(tag))
		}
	}
	rand.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
	r := newResolver(t, tr, Options{})

	// Two concurrent calls and a third one afterwards share the look-ups.
	var wg sync.WaitGroup
	results := make([]map[string]images.Resolution, 2)
	for i := range results {
		wg.Go(func() { results[i] = r.Resolve(ctxT(t), refs) })
	}
	wg.Wait()
	results = append(results, r.Resolve(ctxT(t), refs))

	for _, got := range results {
		if len(got) != len(want) {
			t.Errorf("%d answers, want %d", len(got), len(want))
		}
		for ref, d := range want {
			wantDigest(t, got, ref, d)
		}
	}
	if n := tr.manifests.Load(); n != 50 {
		t.Errorf("manifest requests = %d, want 50 for 50 unique references", n)
	}
	if s := r.Stats(); s.ManifestRequests != 50 || s.MemoHits < 50 {
		t.Errorf("stats = %+v, want 50 manifest requests and ≥ 50 memo hits", s)
	}
}

func TestSpellingsShareOneLookup(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	d := tr.pushImage(t, "team/app:latest")
	refs := []string{tr.ref("team/app"), tr.ref("team/app:latest"), tr.ref("team/app") + "@" + d, tr.ref("team/app:latest") + "@" + d}
	r := newResolver(t, tr, Options{})
	got := r.Resolve(ctxT(t), refs)
	for _, ref := range refs {
		wantDigest(t, got, ref, d)
	}
	// One look-up for the tag, one for the digest (tag@digest is by digest).
	if n := tr.manifests.Load(); n != 2 {
		t.Errorf("manifest requests = %d, want 2", n)
	}
}

func TestMirrorsRouteLookups(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	app := tr.pushImage(t, "team/app:1")
	nginx := tr.pushImage(t, "library/nginx:1.27")
	// Neither origin exists; only the mirror can answer.
	r := newResolver(t, tr, Options{Mirrors: map[string]string{
		"registry.invalid:5000": tr.host,
		"docker.io":             tr.host,
	}})
	refs := []string{"registry.invalid:5000/team/app:1", "nginx:1.27", "docker.io/library/nginx:1.27"}
	got := r.Resolve(ctxT(t), refs)
	wantDigest(t, got, refs[0], app)
	wantDigest(t, got, refs[1], nginx)
	wantDigest(t, got, refs[2], nginx)
	if n := tr.manifests.Load(); n != 2 {
		t.Errorf("manifest requests at the mirror = %d, want 2", n)
	}
}

func TestMirrorWithPathPrefix(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	d := tr.pushImage(t, "dockerhub/library/redis:7")
	r := newResolver(t, tr, Options{Mirrors: map[string]string{"docker.io": tr.host + "/dockerhub"}})
	got := r.Resolve(ctxT(t), []string{"redis:7"})
	wantDigest(t, got, "redis:7", d)
}

func TestDigestExistence(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	d := tr.pushImage(t, "app:1")
	missing := "sha256:" + fmt.Sprintf("%064x", 42)
	byDigest := tr.ref("app@" + d)
	withTag := tr.ref("app:1@" + d)
	staleTag := tr.ref("app:gone@" + d) // the tag does not matter, the digest does
	absent := tr.ref("app@" + missing)
	r := newResolver(t, tr, Options{})

	got := r.Resolve(ctxT(t), []string{byDigest, withTag, staleTag, absent})

	wantDigest(t, got, byDigest, d)
	wantDigest(t, got, withTag, d)
	wantDigest(t, got, staleTag, d)
	wantKind(t, got, absent, NotFound)
	if n := tr.manifests.Load(); n != 2 {
		t.Errorf("manifest requests = %d, want 2 (one HEAD per unique digest)", n)
	}
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	tr.pushImage(t, "app:1")
	r := newResolver(t, tr, Options{})
	got := r.Resolve(ctxT(t), []string{tr.ref("app:2"), tr.ref("nope:1")})
	wantKind(t, got, tr.ref("app:2"), NotFound)
	wantKind(t, got, tr.ref("nope:1"), NotFound)
	if n := tr.manifests.Load(); n != 2 {
		t.Errorf("manifest requests = %d, want 2: a 404 on HEAD is final", n)
	}
}

func TestInvalidReferences(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	refs := []string{"", "UPPER/case:1", "nginx:bad tag", "http://example.com/app:1", "app@sha256:short", ":1"}
	r := newResolver(t, tr, Options{})
	got := r.Resolve(ctxT(t), refs)
	for _, ref := range refs {
		wantKind(t, got, ref, Invalid)
	}
	if n := tr.requests.Load() + r.Stats().Requests; n != 0 {
		t.Errorf("%d requests for malformed references, want 0", n)
	}
}

func TestEmptyInput(t *testing.T) {
	t.Parallel()
	r := newResolver(t, nil, Options{})
	if got := r.Resolve(ctxT(t), nil); len(got) != 0 {
		t.Errorf("got %v, want no answers", got)
	}
}
