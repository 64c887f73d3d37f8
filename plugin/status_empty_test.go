package plugin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An empty kubeconfig is no verdict with a clear message, not a silent
// plain-HTTP attempt on localhost:8080.
func TestStatusEmptyKubeconfig(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"status", "shop", "--kubeconfig", kc, "--timeout", "5s"}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, "test")
	if code != ExitNoVerdict || !strings.Contains(errb.String(), "no cluster configured") || strings.Contains(errb.String(), "8080: connect") {
		t.Fatalf("exit %d, stderr %q; want 3 and a clear message", code, errb.String())
	}
}
