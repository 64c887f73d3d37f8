package resolve

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// cacheVersion names the on-disk layout, so a change starts afresh: v1
// entries carried no signature and are never read.
const cacheVersion = "v2"

// maxEntry bounds the read of one cache entry; a real one is ~250 bytes.
const maxEntry = 4 << 10

// diskCache keeps answers across runs, one small JSON file per answer,
// written atomically (temp file + rename) so concurrent runs sharing a
// directory never read half an entry. It holds references and digests only,
// never credentials.
//
// A cache directory is a trust boundary (SECURITY.md): whoever can write it
// could otherwise choose the digests pin emits. So every entry is signed
// with an HMAC under a key that does not live in the directory, bound to
// its bucket and key, and checked on every read together with its age; an
// entry that fails any check is a miss, asked afresh and overwritten.
type diskCache struct {
	dir       string
	key       []byte
	tagTTL    time.Duration
	digestTTL time.Duration
	now       func() time.Time
	rejected  func()
}

type cacheEntry struct {
	Bucket string    `json:"bucket"`
	Key    string    `json:"key"`
	Digest string    `json:"digest"`
	At     time.Time `json:"at"`
	MAC    string    `json:"mac"`
}

// Cache buckets: digests that exist, and tag answers.
const (
	bucketDigests = "digests"
	bucketTags    = "tags"
)

func newDiskCache(c *config, rejected func()) (*diskCache, error) {
	if c.cacheDir == "" {
		return nil, nil
	}
	d := &diskCache{dir: filepath.Join(c.cacheDir, cacheVersion), key: c.cacheKey, tagTTL: c.tagTTL,
		digestTTL: c.digestTTL, now: c.now, rejected: rejected}
	// The root first, before anything is created in it: a shared root (or a
	// symlink to one) lets others swap v2/ itself for a directory of theirs.
	if err := os.MkdirAll(c.cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating cache directory: %w", err)
	}
	if err := private(c.cacheDir); err != nil {
		return nil, err
	}
	for _, b := range []string{"", bucketDigests, bucketTags} {
		p := filepath.Join(d.dir, b)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, fmt.Errorf("creating cache directory: %w", err)
		}
		if err := private(p); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// private refuses a cache directory other users may write: they could
// replace entries faster than signatures help (deleting them) and it says
// the cache is shared, which must be a decision (SECURITY.md). A symlink
// is judged by the directory it leads to (os.Stat follows it).
func private(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("checking cache directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("cache directory %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		shown := dir
		if target, err := filepath.EvalSymlinks(dir); err == nil && target != filepath.Clean(dir) {
			shown = fmt.Sprintf("%s (a symlink to %s)", dir, target)
		}
		return fmt.Errorf("cache directory %s is writable by other users (mode %v): a shared cache is a trust boundary, use a private one", shown, fi.Mode().Perm())
	}
	return nil
}

// usable reports whether the cache answers look-ups of this sort.
func (c *diskCache) usable(byDigest bool) bool {
	return c != nil && (byDigest || c.tagTTL > 0)
}

func (c *diskCache) ttl(byDigest bool) time.Duration {
	if byDigest {
		return c.digestTTL
	}
	return c.tagTTL
}

// get returns a cached digest for key when the entry is intact, signed,
// answers exactly this key and is younger than its bucket's TTL.
func (c *diskCache) get(byDigest bool, key string) (string, bool) {
	if !c.usable(byDigest) {
		return "", false
	}
	e, err := c.read(c.path(byDigest, key))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.rejected()
		}
		return "", false
	}
	if !c.valid(e, byDigest, key) {
		c.rejected()
		return "", false
	}
	age := c.now().Sub(e.At)
	if age < 0 || age >= c.ttl(byDigest) {
		return "", false
	}
	return e.Digest, true
}

// read opens only a regular file and reads a bounded amount. O_NONBLOCK
// makes opening a FIFO planted in place of an entry return at once instead
// of waiting for a writer; the regular-file check then refuses it.
func (c *diskCache) read(path string) (cacheEntry, error) {
	var e cacheEntry
	b, err := readEntryFile(path, maxEntry)
	if err != nil {
		return e, err
	}
	return e, json.Unmarshal(b, &e)
}

// readEntryFile reads at most limit bytes of a regular file, following no
// symlink and never waiting on a FIFO.
func readEntryFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cache entry %s is not a regular file", path)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

func (c *diskCache) valid(e cacheEntry, byDigest bool, key string) bool {
	h, err := v1.NewHash(e.Digest)
	return err == nil && h.Algorithm == "sha256" && e.Bucket == bucket(byDigest) && e.Key == key &&
		hmac.Equal([]byte(e.MAC), []byte(c.sign(e)))
}

// sign is the entry's HMAC-SHA256 over every field it answers with.
func (c *diskCache) sign(e cacheEntry) string {
	m := hmac.New(sha256.New, c.key)
	fmt.Fprintf(m, "%s\x00%s\x00%s\x00%s\x00%s", cacheVersion, e.Bucket, e.Key, e.Digest, e.At.UTC().Format(time.RFC3339Nano))
	return hex.EncodeToString(m.Sum(nil))
}

// put stores an answer; it returns an error only for the caller's counters.
func (c *diskCache) put(byDigest bool, key, digest string) error {
	if !c.usable(byDigest) {
		return nil
	}
	e := cacheEntry{Bucket: bucket(byDigest), Key: key, Digest: digest, At: c.now().UTC()}
	e.MAC = c.sign(e)
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return writeEntryFile(c.path(byDigest, key), b)
}

// writeEntryFile writes an entry atomically: a temporary file renamed into
// place.
func writeEntryFile(final string, b []byte) error {
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

func bucket(byDigest bool) string {
	if byDigest {
		return bucketDigests
	}
	return bucketTags
}

func (c *diskCache) path(byDigest bool, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, bucket(byDigest), hex.EncodeToString(sum[:])+".json")
}
