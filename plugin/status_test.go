package plugin_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/plugin"
)

// runStatus runs `status` in process and returns the exit code and output.
func runStatus(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := plugin.Run(context.Background(), append([]string{"status"}, args...), plugin.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, "test")
	return code, out.String(), errb.String()
}

// deadKubeconfig writes a kubeconfig whose server nothing listens on.
func deadKubeconfig(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: dead, cluster: {server: "https://%s", insecure-skip-tls-verify: true}}]
users: [{name: dead, user: {token: x}}]
contexts: [{name: dead, context: {cluster: dead, user: dead}}]
current-context: dead
`, addr)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStatusUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"no app", nil, 2, "want exactly one Application name"},
		{"two apps", []string{"a", "b"}, 2, "want exactly one Application name"},
		{"revision and git", []string{"a", "--revision", "abc1234", "--git", "."}, 2, "not both"},
		{"bad output", []string{"a", "-o", "xml"}, 2, "--output"},
		{"bad fail-on", []string{"a", "--fail-on", "info"}, 2, "--fail-on"},
		{"unknown rule", []string{"a", "--rule", "live-imagez=off"}, 2, "unknown rule id"},
		{"unknown flag", []string{"a", "--nope"}, 2, "unknown flag"},
		{"zero timeout", []string{"a", "--timeout", "0s"}, 2, "--timeout"},
		{"-k and --apps-root", []string{"a", "-k", ".", "--apps-root", "."}, 2, "give -k DIR or --apps-root DIR for the expected render, not both"},
		{"--apps-root not a directory", []string{"a", "--apps-root", "status_test.go"}, 2, "--apps-root"},
		{"help", []string{"--help"}, 0, "--kubeconfig"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runStatus(t, c.args...)
			if c.code == 0 {
				stderr = stdout // --help is on stdout
			}
			if code != c.code || !strings.Contains(stderr, c.says) {
				t.Errorf("exit %d, want %d; stderr should say %q:\n%s", code, c.code, c.says, stderr)
			}
		})
	}
}

func TestStatusNoVerdict(t *testing.T) {
	kc := deadKubeconfig(t)
	notRepo := t.TempDir()
	cases := []struct {
		name string
		args []string
		says string
	}{
		{"cluster unreachable", []string{"shop", "--kubeconfig", kc}, "the cluster is unreachable"},
		{"--git is not a repository", []string{"shop", "--kubeconfig", kc, "--git", notRepo}, "reading the HEAD commit of --git"},
		{"-k does not render", []string{"shop", "--kubeconfig", kc, "-k", filepath.Join(notRepo, "nope")}, "nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			began := time.Now()
			code, stdout, stderr := runStatus(t, c.args...)
			if code != 3 || !strings.Contains(stderr, c.says) {
				t.Errorf("exit %d, want 3; stderr should say %q:\n%s%s", code, c.says, stdout, stderr)
			}
			if d := time.Since(began); d > 5*time.Second {
				t.Errorf("took %s: a dead cluster must fail fast", d)
			}
		})
	}
}

// TestStatusWaitUnreachable: with --wait an unreachable cluster is read
// again with backoff until the deadline, then no verdict naming it.
func TestStatusWaitUnreachable(t *testing.T) {
	began := time.Now()
	code, stdout, stderr := runStatus(t, "shop", "--kubeconfig", deadKubeconfig(t), "--wait", "--timeout", "3s")
	took := time.Since(began)
	if code != 3 || stdout != "" || took < 3*time.Second || took > 6*time.Second {
		t.Errorf("exit %d after %s, want 3 at the 3s deadline with nothing on stdout:\n%s%s", code, took, stdout, stderr)
	}
	for _, s := range []string{"--timeout 3s exceeded: the cluster did not answer the last ", "the cluster is unreachable"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}
}
