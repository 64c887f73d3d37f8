package krew

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/report/sarifcheck"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestActionSteps runs the GitHub Action's shell steps (action/*.sh, which
// action.yml calls) on this machine against `make dist`'s archive: the
// install verifies the checksum and refuses a wrong one; the run writes a
// SARIF report code scanning accepts, the step outputs and the summary
// table.
func TestActionSteps(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the action's steps are bash")
	}
	archive := "kubectl-gate_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
	// Only the host's archive is built (not all six): the release's
	// checksums.txt line for it is written here, as make dist writes it.
	built, version := distFiles(t, archive)
	data, err := os.ReadFile(filepath.Join(built, archive))
	if err != nil {
		t.Fatal(err)
	}
	dist := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dist, archive), data, 0o644))
	sum := sha256.Sum256(data)
	must(t, os.WriteFile(filepath.Join(dist, "checksums.txt"), []byte(hex.EncodeToString(sum[:])+"  "+archive+"\n"), 0o644))
	root := testutil.Root(t)
	bash := testutil.Tool(t, "BASH", "bash")
	testutil.Tool(t, "JQ", "jq")
	testutil.Tool(t, "CURL", "curl")

	// A checksum that does not match: nothing is installed.
	bad := t.TempDir()
	must(t, os.WriteFile(filepath.Join(bad, archive), data, 0o644))
	must(t, os.WriteFile(filepath.Join(bad, "checksums.txt"), []byte(strings.Repeat("0", 64)+"  "+archive+"\n"), 0o644))
	badBin := filepath.Join(t.TempDir(), "bin")
	r := testutil.Run(t, root, "", []string{"GATE_VERSION=" + version, "GATE_BASE_URL=file://" + bad, "GATE_BIN_DIR=" + badBin}, bash, "action/install.sh")
	if r.Code == 0 || !strings.Contains(r.Stderr, "checksum mismatch for "+archive) {
		t.Errorf("a wrong checksum: exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(badBin, "kubectl-gate")); err == nil {
		t.Error("a wrong checksum still installed the binary")
	}

	// The release as built: installed, on GITHUB_PATH.
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	ghPath, ghOut, summary := filepath.Join(tmp, "path"), filepath.Join(tmp, "output"), filepath.Join(tmp, "summary.md")
	r = testutil.Run(t, root, "", []string{"GATE_VERSION=" + version, "GATE_BASE_URL=file://" + dist, "GATE_BIN_DIR=" + bin, "GITHUB_PATH=" + ghPath}, bash, "action/install.sh")
	if r.Code != 0 || !strings.Contains(r.Stdout, version) {
		t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, name := range []string{"kubectl-gate", "kubectl_complete-gate"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			t.Errorf("install: %v", err)
		}
	}
	if b, _ := os.ReadFile(ghPath); strings.TrimSpace(string(b)) != bin {
		t.Errorf("GITHUB_PATH = %q, want %q", b, bin)
	}

	// check on the red overlay: exit 1 in the outputs, SARIF code scanning
	// accepts, a summary with the table.
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "RUNNER_TEMP=" + tmp,
		"GITHUB_OUTPUT=" + ghOut, "GITHUB_STEP_SUMMARY=" + summary, "GATE_ARGS=-k examples/overlays/prod-retag"}
	r = testutil.Run(t, root, "", env, bash, "action/run.sh")
	out, _ := os.ReadFile(ghOut)
	if r.Code != 0 || !strings.Contains(string(out), "exit-code=1\n") {
		t.Fatalf("run: exit %d, outputs %q\n%s%s", r.Code, out, r.Stdout, r.Stderr)
	}
	sarif, err := os.ReadFile(filepath.Join(tmp, "kubectl-gate.sarif"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sarifcheck.Check(sarif); err != nil {
		t.Errorf("the action's SARIF: %v", err)
	}
	md, _ := os.ReadFile(summary)
	if !strings.Contains(string(md), "### kubectl-gate: FAIL: violations") || !strings.Contains(string(md), "| `image-digest` | error | 2 |") {
		t.Errorf("summary:\n%s", md)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
