package krew

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// testVersion is baked into the binaries the tests build themselves.
const testVersion = "v0.0.0-test"

// distFiles returns a directory holding the named dist/ files (archives,
// gate-fn binaries) and the VERSION baked into them. With GATE_DIST_FRESH
// set — the Makefile sets it after building dist and dist-fn — that is
// $GATE_DIST as `make dist` left it. Otherwise the files are built into a
// temporary directory by the Makefile's own rules, so the tests never run a
// stale archive.
func distFiles(t *testing.T, names ...string) (dir, version string) {
	t.Helper()
	if os.Getenv("GATE_DIST_FRESH") != "" {
		dir = os.Getenv("GATE_DIST")
		if dir == "" {
			dir = filepath.Join(testutil.Root(t), "dist")
		}
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
				t.Fatalf("GATE_DIST_FRESH is set but %v (run make dist dist-fn)", err)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, ".version"))
		if err != nil {
			t.Fatal(err)
		}
		return dir, strings.TrimSpace(string(b))
	}
	if testing.Short() {
		t.Skip("-short: builds release files with make")
	}
	mk := testutil.Tool(t, "MAKE", "make")
	dir = t.TempDir()
	args := []string{"-s", "--no-print-directory", "DIST=" + dir, "VERSION=" + testVersion}
	for _, n := range names {
		args = append(args, filepath.Join(dir, n))
	}
	cmd := exec.Command(mk, args...)
	cmd.Dir = testutil.Root(t)
	// A make running this test passes its jobserver, which this child can't reach.
	cmd.Env = without(os.Environ(), "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return dir, testVersion
}

// without drops the named variables from an environment.
func without(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// tool is testutil.Tool with the make target that installs the tool in the
// message: the path in env, else name on PATH; missing, the test skips, or
// fails under GATE_REQUIRE_TOOLS (make test).
func tool(t *testing.T, env, name, target string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := name + " not found: set " + env + " or put it on PATH (`make " + target + "` installs it)"
	if os.Getenv("GATE_REQUIRE_TOOLS") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
