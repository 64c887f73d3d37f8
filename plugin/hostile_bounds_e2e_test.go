package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// boundCases are the hostile rows of issue 18's second round: reads
// outside the checkout through every renderer, memory and output bombs,
// the deadline after --write-kustomization's write, and the cache. Each
// builds its own probe (symlinks, FIFOs, devices) in the case's directory.
func boundCases(t *testing.T) []hostileCase {
	reg := testutil.StartRegistry(t)
	digest := reg.PushImage(t, "app:1")
	pod := strings.Replace(podLatest, "nginx:latest", reg.Host+"/app@"+digest, 1)
	// A cache outside the case's directory (its entries are written).
	fifoCache := t.TempDir()
	entry := sha256.Sum256([]byte(reg.Host + "/app@" + digest))
	// --write-kustomization renders again with the digests; the remote
	// resource answers the first render and stalls the second.
	stall := answerOnceServer(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\n")
	tagged := strings.Replace(podLatest, "nginx:latest", reg.Host+"/app:1", 1)
	return []hostileCase{
		{name: "write-kustomization, remote stalls on the render with the digests, --timeout 3s", args: []string{"pin", "--write-kustomization", ".", "--insecure-registry", reg.Host, "--timeout", "3s"},
			files: map[string]string{"kustomization.yaml": "resources:\n- pod.yaml\n- http://" + stall + "/timeout.yaml\n", "pod.yaml": tagged},
			code:  3, want: "--timeout 3s exceeded", maxTime: 6 * time.Second},
		{name: "write-kustomization, remote stalls on the render with the digests, SIGTERM", args: []string{"pin", "--write-kustomization", ".", "--insecure-registry", reg.Host},
			files:  map[string]string{"kustomization.yaml": "resources:\n- pod.yaml\n- http://" + stall + "/sigterm.yaml\n", "pod.yaml": tagged},
			signal: syscall.SIGTERM, signalAfter: 2 * time.Second, code: 3, want: "interrupted by SIGTERM", maxTime: 4 * time.Second},
		{name: "world-writable --cache root", args: []string{"check", "-f", "pod.yaml", "--digest", "verify", "--insecure-registry", reg.Host, "--cache", "shared"},
			files: map[string]string{"pod.yaml": pod}, setup: func(t *testing.T, dir string) {
				must(t, os.Mkdir(filepath.Join(dir, "shared"), 0o700))
				must(t, os.Chmod(filepath.Join(dir, "shared"), 0o777))
			}, code: 2, want: "cache directory shared is writable by other users", stdout: true},
		{name: "--cache is a symlink to a world-writable directory", args: []string{"check", "-f", "pod.yaml", "--digest", "verify", "--insecure-registry", reg.Host, "--cache", "c"},
			files: map[string]string{"pod.yaml": pod}, setup: func(t *testing.T, dir string) {
				shared := filepath.Join(t.TempDir(), "shared")
				must(t, os.Mkdir(shared, 0o700))
				must(t, os.Chmod(shared, 0o777))
				must(t, os.Symlink(shared, filepath.Join(dir, "c")))
			}, code: 2, want: "(a symlink to ", stdout: true},
		{name: "a FIFO cache entry is not waited on", args: []string{"check", "-f", "pod.yaml", "--digest", "verify", "--insecure-registry", reg.Host, "--cache", fifoCache, "--timeout", "20s"},
			files: map[string]string{"pod.yaml": pod}, setup: func(t *testing.T, dir string) {
				p := filepath.Join(fifoCache, "v2", "digests")
				must(t, os.MkdirAll(p, 0o700))
				must(t, syscall.Mkfifo(filepath.Join(p, hex.EncodeToString(entry[:])+".json"), 0o600))
			}, code: 0, want: "PASS", stdout: true, maxTime: 5 * time.Second},
	}
}

// answerOnceServer serves body on the first request for each path and
// stalls every later one until its client goes; it returns host:port. The
// count is per path, so two rows need two paths.
func answerOnceServer(t *testing.T, body string) string {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		n := seen[r.URL.Path]
		mu.Unlock()
		if n > 1 {
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.CloseClientConnections)
	return strings.TrimPrefix(srv.URL, "http://")
}
