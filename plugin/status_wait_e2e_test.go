package plugin_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil/cluster"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil/livetest"
	"github.com/kubectl-gate/kubectl-gate/plugin"
)

// progressingRollout is the status the Rollout controller writes while the
// new version is scaling up.
const progressingRollout = `
observedGeneration: "1"
phase: Progressing
conditions:
- {type: Available, status: "False", reason: AvailableReason, message: Rollout does not have minimum availability}
- {type: Progressing, status: "True", reason: ReplicaSetUpdated}`

// waiting is a `kubectl gate status --wait` running in the background.
type waiting struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	began    time.Time
}

func startWait(t *testing.T, kubectl string, env []string, args ...string) *waiting {
	t.Helper()
	w := &waiting{cmd: exec.Command(kubectl, append([]string{"gate", "status"}, args...)...)}
	w.cmd.Env = append(os.Environ(), env...)
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.err
	w.began = time.Now()
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.cmd.Process.Kill() })
	return w
}

// end waits for the command and returns its exit code and run time.
func (w *waiting) end(t *testing.T) (int, time.Duration) {
	t.Helper()
	err := w.cmd.Wait()
	took := time.Since(w.began)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("exit %d after %s\n--- stdout\n%s--- stderr\n%s", code, took.Round(time.Millisecond), w.out.String(), w.err.String())
	return code, took
}

// TestE2EStatusWait runs `kubectl gate status --wait` (the built plugin,
// through the real kubectl) against a real kube-apiserver while the test
// plays Argo CD and the controllers: a state that converges mid-wait, one
// that never does, a signal, and the API server stopped mid-wait.
func TestE2EStatusWait(t *testing.T) {
	kubectl := testutil.Tool(t, "KUBECTL", "kubectl")
	c := cluster.Start(t)
	bin := filepath.Dir(testutil.Bin(t, "kubectl-gate"))
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	repo, oldSHA, headSHA := gitRepo(t)
	render := livetest.WriteRender(t)
	livetest.InstallCRDs(t, c)
	// Argo CD has not seen the new commit yet, and an old pod still runs.
	late := livetest.App{Name: "late", Revision: oldSHA, ExtraPods: []string{"registry.example/web:0.9"}}
	livetest.Install(t, c, late)
	livetest.Install(t, c, livetest.App{Name: "stuck", Revision: oldSHA})
	args := func(app string, more ...string) []string {
		return append([]string{app, "--git", repo, "-k", render, "--kubeconfig", c.Kubeconfig, "--wait"}, more...)
	}

	t.Run("converges mid-wait", func(t *testing.T) {
		w := startWait(t, kubectl, env, args("late", "--timeout", "60s")...)
		time.Sleep(2 * time.Second)
		// Argo CD syncs the new commit; the Rollout starts progressing.
		late.Revision = headSHA
		livetest.InstallApplication(t, c, late)
		c.SetStatus(t, "argoproj.io/v1alpha1", "Rollout", "late", "api", progressingRollout)
		time.Sleep(2 * time.Second)
		// The old pod goes, the Rollout becomes healthy.
		settled := time.Now()
		if r := testutil.Run(t, ".", "", nil, kubectl, "--kubeconfig", c.Kubeconfig, "-n", "late", "delete", "pod", "web-extra-0"); r.Code != 0 {
			t.Fatalf("kubectl delete pod: %s", r.Stderr)
		}
		c.SetStatus(t, "argoproj.io/v1alpha1", "Rollout", "late", "api", livetest.HealthyRollout)
		code, took := w.end(t)
		if code != 0 || !strings.Contains(w.out.String(), "PASS") || !strings.Contains(w.out.String(), "expected "+headSHA) {
			t.Fatalf("exit %d, want 0 with a PASS report on %s", code, headSHA)
		}
		if since := time.Since(settled); took < 4*time.Second || since > 12*time.Second {
			t.Errorf("ended %s after start, %s after the state settled: want after it, and within 12s of it", took, since)
		}
		if strings.Contains(w.err.String(), "waiting") {
			t.Errorf("stderr is a pipe: no progress line expected:\n%q", w.err.String())
		}
	})

	t.Run("never converges", func(t *testing.T) {
		w := startWait(t, kubectl, env, args("stuck", "--timeout", "6s")...)
		code, took := w.end(t)
		if code != 1 || took < 6*time.Second || took > 10*time.Second {
			t.Errorf("exit %d after %s, want 1 at the 6s deadline", code, took)
		}
		for _, s := range []string{"--timeout 6s exceeded after", "still waiting for: revision (synced " + oldSHA[:7] + ", want " + headSHA[:7] + ")"} {
			if !strings.Contains(w.err.String(), s) {
				t.Errorf("stderr lacks %q", s)
			}
		}
		if !strings.Contains(w.out.String(), "[live-revision]") || !strings.Contains(w.out.String(), "MISMATCH") {
			t.Errorf("stdout lacks the report of what is still wrong")
		}
	})

	t.Run("progress on a terminal", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := plugin.Run(context.Background(), append([]string{"status"}, args("stuck", "--timeout", "3s")...),
			plugin.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, ErrIsTTY: true}, "test")
		lines := strings.Count(errb.String(), "\r\x1b[K")
		if code != 1 || lines < 2 || !strings.Contains(errb.String(), "(read 1, next in 1s): revision (synced "+oldSHA[:7]) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("exit %d, %d progress rewrites; want 1 and one rewritten line per read, then the final line:\n%q", code, lines, errb.String())
		}
	})

	t.Run("SIGINT", func(t *testing.T) {
		w := startWait(t, kubectl, env, args("stuck", "--timeout", "60s")...)
		time.Sleep(1500 * time.Millisecond)
		if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		code, took := w.end(t)
		if code != 3 || took > 5*time.Second || !strings.Contains(w.err.String(), "interrupted by SIGINT") || w.out.Len() != 0 {
			t.Errorf("exit %d after %s, want 3 at once, naming SIGINT, nothing on stdout", code, took)
		}
	})

	t.Run("API server stopped mid-wait", func(t *testing.T) {
		w := startWait(t, kubectl, env, args("stuck", "--timeout", "10s")...)
		time.Sleep(2 * time.Second)
		c.Stop()
		code, took := w.end(t)
		if code != 3 || took < 10*time.Second || took > 14*time.Second {
			t.Errorf("exit %d after %s, want 3 at the 10s deadline", code, took)
		}
		for _, s := range []string{"no verdict: --timeout 10s exceeded: the cluster did not answer the last", "the cluster is unreachable"} {
			if !strings.Contains(w.err.String(), s) {
				t.Errorf("stderr lacks %q", s)
			}
		}
		if w.out.Len() != 0 {
			t.Errorf("stdout holds a report of an old answer")
		}
	})
}
