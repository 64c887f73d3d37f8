package resolve

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// maxRecord bounds the read of one record entry.
const maxRecord = 64 << 10

// Records keeps other answers about content-addressed things (a digest's
// verified signature) in the Resolver's on-disk cache, under the same
// rules as digests: one file per key in a bucket of its own, written
// atomically, signed with the cache key (an HMAC over the bucket, the key,
// the value and the time, with a domain of its own so no digest entry can
// pass for a record), and kept for the digest TTL. An entry that fails any
// check is counted as a reject ([Stats.CacheRejects]) and is a miss.
type Records struct {
	c      *diskCache
	bucket string
	dir    string
	hits   func()
}

type recordEntry struct {
	Bucket string    `json:"bucket"`
	Key    string    `json:"key"`
	Value  []byte    `json:"value"`
	At     time.Time `json:"at"`
	MAC    string    `json:"mac"`
}

var bucketName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// Records returns the record store bucket of the Resolver's cache, or nil
// when the Resolver has no cache directory. The bucket is a short
// lower-case name other than the digest cache's own ("digests", "tags").
func (r *Resolver) Records(bucket string) (*Records, error) {
	if r.cache == nil {
		return nil, nil
	}
	if !bucketName.MatchString(bucket) || bucket == bucketDigests || bucket == bucketTags {
		return nil, fmt.Errorf("cache bucket %q: want a lower-case name other than %s and %s", bucket, bucketDigests, bucketTags)
	}
	dir := filepath.Join(r.cache.dir, "records-"+bucket)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating cache directory: %w", err)
	}
	if err := private(dir); err != nil {
		return nil, err
	}
	return &Records{c: r.cache, bucket: bucket, dir: dir, hits: func() { r.stats.cacheHits.Add(1) }}, nil
}

// Get returns the value kept for key when its entry is intact, signed,
// answers exactly this bucket and key, and is younger than the digest TTL.
func (s *Records) Get(key string) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	b, err := readEntryFile(s.path(key), maxRecord+1)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	var e recordEntry
	if err == nil && len(b) > maxRecord {
		err = errors.New("too large")
	}
	if err == nil {
		err = json.Unmarshal(b, &e)
	}
	if err != nil || e.Bucket != s.bucket || e.Key != key || !hmac.Equal([]byte(e.MAC), []byte(s.sign(e))) {
		s.c.rejected()
		return nil, false
	}
	age := s.c.now().Sub(e.At)
	if age < 0 || age >= s.c.digestTTL {
		return nil, false
	}
	s.hits()
	return e.Value, true
}

// Put keeps value for key.
func (s *Records) Put(key string, value []byte) error {
	if s == nil {
		return nil
	}
	e := recordEntry{Bucket: s.bucket, Key: key, Value: value, At: s.c.now().UTC()}
	e.MAC = s.sign(e)
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if len(b) > maxRecord {
		return fmt.Errorf("cache record of %d bytes, more than %d", len(b), maxRecord)
	}
	return writeEntryFile(s.path(key), b)
}

// sign is the entry's HMAC-SHA256; "record" keeps its input apart from a
// digest entry's.
func (s *Records) sign(e recordEntry) string {
	m := hmac.New(sha256.New, s.c.key)
	fmt.Fprintf(m, "%s\x00record\x00%s\x00%s\x00%s\x00%s", cacheVersion, e.Bucket, e.Key,
		base64.StdEncoding.EncodeToString(e.Value), e.At.UTC().Format(time.RFC3339Nano))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Records) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:])+".json")
}
