package resolve

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
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
		t.Errorf("past TTL: %d manifest requests, want 1 (the tag; digests never expire)", n)
	}
	clk.advance(365 * 24 * time.Hour)
	noTags := Options{CacheDir: dir, Now: clk.Now}
	if n := lookups(noTags); n != 1 {
		t.Errorf("TagTTL 0: %d manifest requests, want 1 (the tag)", n)
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

	entries, err := filepath.Glob(filepath.Join(dir, cacheVersion, bucketDigests, "*.json"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("cache entries %v, %v; want 1", entries, err)
	}
	if err := os.WriteFile(entries[0], []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = newResolver(t, tr, Options{CacheDir: dir})
	wantDigest(t, r.Resolve(ctxT(t), []string{ref}), ref, d)
	if s := r.Stats(); s.CacheHits != 0 || s.ManifestRequests != 1 {
		t.Errorf("stats %+v: want the broken entry treated as a miss", s)
	}
}
