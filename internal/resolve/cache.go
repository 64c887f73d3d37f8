package resolve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// cacheVersion names the on-disk layout, so a future change can start afresh.
const cacheVersion = "v1"

// diskCache keeps answers across runs, one small JSON file per answer,
// written atomically (temp file + rename) so concurrent runs sharing a
// directory never read half an entry. It holds references and digests only,
// never credentials. A broken entry is a miss.
type diskCache struct {
	dir    string
	tagTTL time.Duration
	now    func() time.Time
}

type cacheEntry struct {
	Key    string    `json:"key"`
	Digest string    `json:"digest"`
	At     time.Time `json:"at"`
}

// Cache buckets: digests that exist (kept forever) and tag answers (TTL).
const (
	bucketDigests = "digests"
	bucketTags    = "tags"
)

func newDiskCache(dir string, tagTTL time.Duration, now func() time.Time) (*diskCache, error) {
	if dir == "" {
		return nil, nil
	}
	c := &diskCache{dir: filepath.Join(dir, cacheVersion), tagTTL: tagTTL, now: now}
	for _, b := range []string{bucketDigests, bucketTags} {
		if err := os.MkdirAll(filepath.Join(c.dir, b), 0o700); err != nil {
			return nil, fmt.Errorf("creating cache directory: %w", err)
		}
	}
	return c, nil
}

// usable reports whether the cache answers look-ups of this sort.
func (c *diskCache) usable(byDigest bool) bool {
	return c != nil && (byDigest || c.tagTTL > 0)
}

// get returns a cached digest for key: any entry for a digest, an entry no
// older than the tag TTL for a tag.
func (c *diskCache) get(byDigest bool, key string) (string, bool) {
	if !c.usable(byDigest) {
		return "", false
	}
	b, err := os.ReadFile(c.path(byDigest, key))
	if err != nil {
		return "", false
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || e.Key != key || e.Digest == "" {
		return "", false
	}
	if !byDigest {
		age := c.now().Sub(e.At)
		if age < 0 || age >= c.tagTTL {
			return "", false
		}
	}
	return e.Digest, true
}

// put stores an answer; it returns an error only for the caller's counters.
func (c *diskCache) put(byDigest bool, key, digest string) error {
	if !c.usable(byDigest) {
		return nil
	}
	b, err := json.Marshal(cacheEntry{Key: key, Digest: digest, At: c.now().UTC()})
	if err != nil {
		return err
	}
	final := c.path(byDigest, key)
	tmp, err := os.CreateTemp(filepath.Dir(final), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), final)
}

func (c *diskCache) path(byDigest bool, key string) string {
	bucket := bucketTags
	if byDigest {
		bucket = bucketDigests
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, bucket, hex.EncodeToString(sum[:])+".json")
}
