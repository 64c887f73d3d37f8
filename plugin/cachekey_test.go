package plugin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCacheKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubectl-gate", "cache.key")
	k1, err := keyFile(path)
	if err != nil || len(k1) != 32 {
		t.Fatalf("creating: %x, %v", k1, err)
	}
	k2, err := keyFile(path)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("reading again: %x, %v; want the same key", k2, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := keyFile(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a key others can read: want refused, got %v", err)
	}
}

func TestCacheKeyFromEnvironment(t *testing.T) {
	t.Setenv(cacheKeyEnv, "a CI secret")
	k, err := cacheKey()
	if err != nil || len(k) != 32 {
		t.Fatalf("%x, %v", k, err)
	}
}
