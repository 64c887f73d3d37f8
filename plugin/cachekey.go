package plugin

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// cacheKeyEnv names the variable that holds the --cache signing key, for a
// CI whose cache directory is restored between runs: keep the key a secret
// that pull requests from forks cannot read (SECURITY.md).
const cacheKeyEnv = "KUBECTL_GATE_CACHE_KEY"

// cacheKey returns the key --cache entries are signed with: from
// $KUBECTL_GATE_CACHE_KEY, else from a private file in the user's config
// directory, created on first use. It never lives in the cache directory:
// whoever holds it can write answers the gate believes.
func cacheKey() ([]byte, error) {
	if v := os.Getenv(cacheKeyEnv); v != "" {
		sum := sha256.Sum256([]byte(v))
		return sum[:], nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("finding the cache signing key (set %s): %w", cacheKeyEnv, err)
	}
	return keyFile(filepath.Join(dir, "kubectl-gate", "cache.key"))
}

// keyFile reads a private 32-byte key, creating it when absent.
func keyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading cache signing key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("cache signing key %s must be a regular file only its owner can read (chmod 600)", path)
	}
	key := make([]byte, 32)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("reading cache signing key %s: %w", path, err)
	}
	return key, nil
}

// newKeyFile writes the key to a temporary file and links it into place,
// so a concurrent run reads the whole key or creates none.
func newKeyFile(path string) ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("creating cache signing key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating cache signing key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cache.key-*")
	if err != nil {
		return nil, fmt.Errorf("creating cache signing key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("writing cache signing key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("writing cache signing key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return keyFile(path) // another run created it first
	} else if err != nil {
		return nil, fmt.Errorf("creating cache signing key: %w", err)
	}
	return key, nil
}
