package resolve

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRecords: a record round-trips through the cache directory for a
// fresh Resolver with the same key; an entry whose value was changed, that
// was signed under another key, that was copied to another key's file, or
// that is a digest entry put in its place is rejected and counted; an
// entry older than the digest TTL is a miss.
func TestRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	open := func(key []byte) (*Resolver, *Records) {
		t.Helper()
		r := newResolver(t, nil, Options{CacheDir: dir, CacheKey: key, Now: clk.Now})
		s, err := r.Records("signatures")
		if err != nil {
			t.Fatal(err)
		}
		return r, s
	}
	_, w := open(testCacheKey)
	value := []byte(`{"signer":{"Key":"sha256:aa"}}`)
	if err := w.Put("a@sha256:1", value); err != nil {
		t.Fatal(err)
	}
	if err := w.Put("b@sha256:2", []byte(`{"other":true}`)); err != nil {
		t.Fatal(err)
	}
	r, s := open(testCacheKey)
	if got, ok := s.Get("a@sha256:1"); !ok || !bytes.Equal(got, value) {
		t.Fatalf("a fresh Resolver reads %q %v, want %q", got, ok, value)
	}
	if _, ok := s.Get("c@sha256:3"); ok {
		t.Fatal("a key never put was found")
	}
	if st := r.Stats(); st.CacheHits != 1 || st.CacheRejects != 0 {
		t.Fatalf("stats %+v, want one hit and no reject", st)
	}

	pa, pb := s.path("a@sha256:1"), s.path("b@sha256:2")
	orig, err := os.ReadFile(pa)
	if err != nil {
		t.Fatal(err)
	}
	tamper := func(t *testing.T, path string, data []byte) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.WriteFile(pa, orig, 0o600) })
	}
	var e recordEntry
	if err := json.Unmarshal(orig, &e); err != nil {
		t.Fatal(err)
	}
	changed := e
	changed.Value = []byte(`{"signer":{"Key":"sha256:bb"}}`)
	changedJSON, _ := json.Marshal(changed)
	digestEntry, _ := json.Marshal(cacheEntry{Bucket: bucketDigests, Key: "a@sha256:1", Digest: "sha256:" + string(bytes.Repeat([]byte("a"), 64)), At: clk.Now()})

	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"a changed value", func(t *testing.T) { tamper(t, pa, changedJSON) }},
		{"another key's entry copied over", func(t *testing.T) {
			other, _ := os.ReadFile(pb)
			tamper(t, pa, other)
		}},
		{"a digest entry in its place", func(t *testing.T) { tamper(t, pa, digestEntry) }},
		{"not JSON", func(t *testing.T) { tamper(t, pa, []byte("{")) }},
		{"signed under another cache key", func(t *testing.T) {
			_, o := open(bytes.Repeat([]byte{7}, 32))
			if err := o.Put("a@sha256:1", changed.Value); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.WriteFile(pa, orig, 0o600) })
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t)
			r, s := open(testCacheKey)
			if got, ok := s.Get("a@sha256:1"); ok {
				t.Fatalf("tampered entry trusted: %q", got)
			}
			if st := r.Stats(); st.CacheRejects != 1 || st.CacheHits != 0 {
				t.Fatalf("stats %+v, want one reject", st)
			}
		})
	}

	clk.advance(DefaultDigestTTL + time.Second)
	if _, s := open(testCacheKey); s != nil {
		if _, ok := s.Get("a@sha256:1"); ok {
			t.Error("an entry older than the digest TTL was used")
		}
	}

	// No cache directory, no records; the digest cache's buckets are not
	// records' to use.
	if s, err := newResolver(t, nil, Options{}).Records("signatures"); s != nil || err != nil {
		t.Errorf("no cache: got %v %v, want nil", s, err)
	}
	for _, b := range []string{"digests", "tags", "../x", ""} {
		if _, err := newResolver(t, nil, Options{CacheDir: dir}).Records(b); err == nil {
			t.Errorf("bucket %q accepted", b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, cacheVersion, "records-signatures")); err != nil {
		t.Error(err)
	}
}
