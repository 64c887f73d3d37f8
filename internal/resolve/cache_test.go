package resolve

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/images"
)

// clock is a settable test clock for cache ages.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestDiskCache(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	d := tr.pushImage(t, "app:1")
	tag, byDigest := tr.ref("app:1"), tr.ref("app@"+d)
	refs := []string{tag, byDigest}
	dir := t.TempDir()
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	opts := Options{CacheDir: dir, TagTTL: time.Hour, Now: clk.Now}

	// lookups resolves refs with a fresh Resolver on the shared directory and
	// returns how many manifest requests it made.
	lookups := func(opts Options) int64 {
		t.Helper()
		before := tr.manifests.Load()
		r := newResolver(t, tr, opts)
		got := r.Resolve(ctxT(t), refs)
		wantDigest(t, got, tag, d)
		wantDigest(t, got, byDigest, d)
		if s := r.Stats(); s.ManifestRequests+s.CacheHits != 2 {
			t.Errorf("stats %+v: want every answer from the registry or the cache", s)
		}
		return tr.manifests.Load() - before
	}

	if n := lookups(opts); n != 2 {
		t.Errorf("cold cache: %d manifest requests, want 2", n)
	}
	if n := lookups(opts); n != 0 {
		t.Errorf("warm cache: %d manifest requests, want 0", n)
	}
	verify := opts
	verify.NoTagCache = true
	if n := lookups(verify); n != 1 {
		t.Errorf("NoTagCache: %d manifest requests, want 1 (the tag)", n)
	}
	clk.advance(59 * time.Minute)
	if n := lookups(opts); n != 0 {
		t.Errorf("within TTL: %d manifest requests, want 0", n)
	}
	clk.advance(2 * time.Minute) // 61 minutes after the tag answer
	if n := lookups(opts); n != 1 {
		t.Errorf("past TTL: %d manifest requests, want 1 (the tag; the digest is younger than a day)", n)
	}
	noTags := Options{CacheDir: dir, Now: clk.Now}
	if n := lookups(noTags); n != 1 {
		t.Errorf("TagTTL 0: %d manifest requests, want 1 (the tag)", n)
	}
	clk.advance(DefaultDigestTTL)
	if n := lookups(noTags); n != 2 {
		t.Errorf("past the digest TTL: %d manifest requests, want 2 (digest entries are re-confirmed)", n)
	}
}

func TestDiskCacheKeepsNoFailures(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	missing := tr.ref("app@sha256:" + fmt.Sprintf("%064x", 7))
	dir := t.TempDir()
	for range 2 {
		r := newResolver(t, tr, Options{CacheDir: dir, TagTTL: time.Hour})
		wantKind(t, r.Resolve(ctxT(t), []string{missing, tr.ref("app:1")}), missing, NotFound)
	}
	if n := tr.manifests.Load(); n != 4 {
		t.Errorf("manifest requests = %d, want 4: a missing image may appear later", n)
	}
}

func TestDiskCacheIgnoresBrokenEntries(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	d := tr.pushImage(t, "app:1")
	dir := t.TempDir()
	r := newResolver(t, tr, Options{CacheDir: dir})
	ref := tr.ref("app@" + d)
	wantDigest(t, r.Resolve(ctxT(t), []string{ref}), ref, d)

	entry := onlyEntry(t, dir, bucketDigests)
	if err := os.WriteFile(entry, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = newResolver(t, tr, Options{CacheDir: dir})
	wantDigest(t, r.Resolve(ctxT(t), []string{ref}), ref, d)
	if s := r.Stats(); s.CacheHits != 0 || s.ManifestRequests != 1 || s.CacheRejects != 1 {
		t.Errorf("stats %+v: want the broken entry rejected and treated as a miss", s)
	}
}

func onlyEntry(t *testing.T, dir, bucket string) string {
	t.Helper()
	entries, err := filepath.Glob(filepath.Join(dir, cacheVersion, bucket, "*.json"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("cache entries %v, %v; want 1", entries, err)
	}
	return entries[0]
}

// editEntry rewrites one field of a cache entry as an attacker with write
// access to the directory would, keeping the JSON well formed.
func editEntry(t *testing.T, path string, edit func(*cacheEntry)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e cacheEntry
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	edit(&e)
	if b, err = json.Marshal(e); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A tampered tag entry must not make pin emit the attacker's digest, and a
// forged digest entry must not make verify pass a digest that does not
// exist: both are rejected, asked afresh and overwritten.
func TestDiskCacheNeverTrustsTamperedEntries(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	good := tr.pushImage(t, "app:1")
	evil := tr.pushImage(t, "evil:1")
	missing := "sha256:" + fmt.Sprintf("%064x", 9)
	tag := tr.ref("app:1")
	cases := []struct {
		name   string
		ref    string
		bucket string
		edit   func(*cacheEntry)
		other  []byte // a different signing key, when set
	}{
		{"tag entry points elsewhere", tag, bucketTags, func(e *cacheEntry) { e.Digest = evil }, nil},
		{"tag entry re-signed without the key", tag, bucketTags, func(e *cacheEntry) { e.Digest = evil; e.MAC = "" }, nil},
		{"entry signed with another key", tag, bucketTags, nil, []byte("somebody else's key!")},
		{"tag entry made younger", tag, bucketTags, func(e *cacheEntry) { e.At = e.At.Add(time.Minute) }, nil},
		{"digest entry for a missing digest", tr.ref("app@" + good), bucketDigests, func(e *cacheEntry) { e.Key = strings.Replace(e.Key, good, missing, 1) }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{CacheDir: dir, TagTTL: time.Hour, CacheKey: c.other}
			r := newResolver(t, tr, opts)
			wantDigest(t, r.Resolve(ctxT(t), []string{c.ref}), c.ref, good)
			if c.edit != nil {
				editEntry(t, onlyEntry(t, dir, c.bucket), c.edit)
			}
			r = newResolver(t, tr, Options{CacheDir: dir, TagTTL: time.Hour})
			wantDigest(t, r.Resolve(ctxT(t), []string{c.ref}), c.ref, good)
			if s := r.Stats(); s.CacheHits != 0 || s.CacheRejects != 1 || s.ManifestRequests != 1 {
				t.Errorf("stats %+v: want the entry rejected and asked afresh", s)
			}
			r = newResolver(t, tr, Options{CacheDir: dir, TagTTL: time.Hour})
			wantDigest(t, r.Resolve(ctxT(t), []string{c.ref}), c.ref, good)
			if s := r.Stats(); s.CacheHits != 1 || s.ManifestRequests != 0 {
				t.Errorf("stats %+v: want the rewritten entry trusted", s)
			}
		})
	}
}

// An entry moved to the file of another key answers nothing.
func TestDiskCacheEntryBoundToItsKey(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	tr.pushImage(t, "app:1")
	evil := tr.pushImage(t, "evil:1")
	dir := t.TempDir()
	r := newResolver(t, tr, Options{CacheDir: dir, TagTTL: time.Hour})
	r.Resolve(ctxT(t), []string{tr.ref("app:1"), tr.ref("evil:1")})
	c := r.cache
	evilEntry := c.path(false, tr.ref("evil:1")+"|")
	b, err := os.ReadFile(evilEntry)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.path(false, tr.ref("app:1")+"|"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	r = newResolver(t, tr, Options{CacheDir: dir, TagTTL: time.Hour})
	got := r.Resolve(ctxT(t), []string{tr.ref("app:1")})
	if got[tr.ref("app:1")].Digest == evil {
		t.Fatal("an entry copied from another key was trusted")
	}
	if s := r.Stats(); s.CacheRejects != 1 {
		t.Errorf("stats %+v: want one rejected entry", s)
	}
}

// A symbolic link or FIFO planted in place of an entry is neither followed
// nor waited on.
func TestDiskCacheReadsOnlyRegularFiles(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	d := tr.pushImage(t, "app:1")
	dir := t.TempDir()
	ref := tr.ref("app@" + d)
	r := newResolver(t, tr, Options{CacheDir: dir})
	entry := r.cache.path(true, tr.host+"/app@"+d)
	if err := os.Symlink("/dev/zero", entry); err != nil {
		t.Fatal(err)
	}
	wantDigest(t, r.Resolve(ctxT(t), []string{ref}), ref, d)
	if s := r.Stats(); s.CacheRejects != 1 {
		t.Errorf("stats %+v: want the symlink rejected", s)
	}
}

func TestDiskCacheRefusesSharedDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, cacheVersion), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, cacheVersion), 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{CacheDir: dir, CacheKey: testCacheKey})
	if err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("want a shared cache directory refused, got %v", err)
	}
	if _, err := New(Options{CacheDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "signing key") {
		t.Fatalf("want a cache without a key refused, got %v", err)
	}
}

// The root itself, or a symlink to a shared root, is refused before
// anything is created in it: checking only v2/ let another user swap the
// whole layout (issue 18).
func TestDiskCacheRefusesSharedRoot(t *testing.T) {
	t.Parallel()
	for _, mode := range []os.FileMode{0o777, 0o770, 0o757} {
		shared := filepath.Join(t.TempDir(), "shared")
		if err := os.Mkdir(shared, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(shared, mode); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(t.TempDir(), "cache")
		if err := os.Symlink(shared, link); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{shared, link} {
			_, err := New(Options{CacheDir: dir, CacheKey: testCacheKey})
			if err == nil || !strings.Contains(err.Error(), "writable by other users") {
				t.Errorf("mode %v, %s: want the shared root refused, got %v", mode, dir, err)
			}
			if dir == link && err != nil && !strings.Contains(err.Error(), "a symlink to "+shared) {
				t.Errorf("want the symlink named with its target, got %v", err)
			}
		}
		if _, err := os.Stat(filepath.Join(shared, cacheVersion)); err == nil {
			t.Errorf("mode %v: %s/ was created in a refused root", mode, cacheVersion)
		}
	}
	if _, err := New(Options{CacheDir: filepath.Join(t.TempDir(), "new"), CacheKey: testCacheKey}); err != nil {
		t.Errorf("a fresh private root: %v", err)
	}
}

// A FIFO planted in place of an entry is not waited on: the look-up goes
// to the registry at once (before, it blocked until the deadline).
func TestDiskCacheDoesNotWaitOnAFIFO(t *testing.T) {
	t.Parallel()
	tr := newRegistry(t)
	d := tr.pushImage(t, "app:1")
	ref := tr.ref("app@" + d)
	r := newResolver(t, tr, Options{CacheDir: t.TempDir()})
	if err := syscall.Mkfifo(r.cache.path(true, tr.host+"/app@"+d), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan map[string]images.Resolution, 1)
	go func() { done <- r.Resolve(ctxT(t), []string{ref}) }()
	select {
	case got := <-done:
		wantDigest(t, got, ref, d)
	case <-time.After(5 * time.Second):
		t.Fatal("the look-up waited on a FIFO cache entry")
	}
	if s := r.Stats(); s.CacheRejects != 1 {
		t.Errorf("stats %+v: want the FIFO rejected", s)
	}
}
