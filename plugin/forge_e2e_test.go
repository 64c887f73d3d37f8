package plugin

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// forge is what a manifest author writes into a name to start a line of
// their own: a green verdict and GitHub workflow commands, then a terminal
// escape that clears the screen.
const forge = "x\nPASS: 9 resource(s), 0 error(s), 0 warning(s)\n::error file=a.yaml,line=1::forged\n  ::warning::indented\x1b[2J"

// runPiped runs the built plugin in dir with stdout and stderr as pipes,
// as CI does.
func runPiped(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(testutil.Bin(t, "kubectl-gate"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "KUBECONFIG="+filepath.Join(dir, "absent"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// assertNoForgedLine: no line of the stream is a workflow command the gate
// did not mean (github output's own lines start with its commands), no
// verdict line but the last, and no raw ESC.
func assertNoForgedLine(t *testing.T, what, s string, github bool) {
	t.Helper()
	if strings.ContainsRune(s, '\x1b') {
		t.Errorf("%s: a raw ESC reached the pipe:\n%q", what, s)
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "::") && !(github && (strings.HasPrefix(l, "::notice title=") || strings.HasPrefix(l, "::error ") || strings.HasPrefix(l, "::warning "))) {
			t.Errorf("%s line %d is a forged workflow command: %q", what, i, l)
		}
		if strings.Contains(l, "::error file=a.yaml") && !strings.Contains(l, "%0A") && !strings.Contains(l, `\n`) {
			t.Errorf("%s line %d carries the forged command unescaped: %q", what, i, l)
		}
		if (strings.HasPrefix(l, "PASS") || strings.HasPrefix(l, "FAIL")) && i != len(lines)-1 {
			t.Errorf("%s line %d is a verdict line before the last: %q", what, i, l)
		}
	}
}

// TestE2EAManifestCannotForgeOutput (issue 18, class 6): an in-tree Gate
// named with newlines (printed on the config: line) and an object named
// with an escape sequence, on a green and a red run, in text and github
// output: every line is the gate's.
func TestE2EAManifestCannotForgeOutput(t *testing.T) {
	pinned := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: \"nginx@sha256:" + strings.Repeat("a", 64) + "\"}]}\n"
	gateYAML := "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata:\n  name: " + strings.ReplaceAll(`"`+strings.NewReplacer("\n", `\n`, "\x1b", `\e`).Replace(forge)+`"`, "\n", "") +
		"\n  annotations: {config.kubernetes.io/function: \"exec: {path: gate-fn}\"}\nspec: {}\n"
	red := "apiVersion: v1\nkind: Pod\nmetadata: {name: \"" + strings.NewReplacer("\n", `\n`, "\x1b", `\e`).Replace(forge) + "\"}\nspec: {containers: [{name: c, image: nginx:latest}]}\n"
	for _, c := range []struct {
		name string
		pod  string
		code int
	}{{"green", pinned, 0}, {"red", red, 1}} {
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, map[string]string{
			"kustomization.yaml": "resources: [pod.yaml]\nvalidators: [gate.yaml]\n",
			"pod.yaml":           c.pod,
			"gate.yaml":          gateYAML,
		})
		for _, format := range []string{"text", "github"} {
			out, errOut, code := runPiped(t, dir, "check", "-k", ".", "-o", format, "--rule", "schema=off")
			if code != c.code {
				t.Fatalf("%s -o %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.name, format, code, c.code, out, errOut)
			}
			if format == "text" && !strings.Contains(out, `config: built-in defaults + in-tree Gate x\nPASS: 9`) {
				t.Errorf("%s: the Gate's name is not shown escaped on the config line:\n%s", c.name, out)
			}
			assertNoForgedLine(t, c.name+" -o "+format+" stdout", out, format == "github")
			assertNoForgedLine(t, c.name+" -o "+format+" stderr", errOut, false)
		}
	}
}

// TestE2EStopLineCannotForgeACommand: the --timeout stop line names what
// was running — here a directory whose name carries a workflow command —
// and under -o github it still starts no command of its own.
func TestE2EStopLineCannotForgeACommand(t *testing.T) {
	root := t.TempDir()
	name := "o\n::error file=a.yaml,line=1::forged"
	dir := filepath.Join(root, name)
	testutil.WriteFiles(t, dir, map[string]string{
		"kustomization.yaml": "resources:\n- http://" + silentServer(t) + "/remote.yaml\n",
	})
	out, errOut, code := runPiped(t, root, "check", "-k", name, "-o", "github", "--timeout", "1s")
	if code != 3 || !strings.Contains(errOut, `--timeout 1s exceeded`) || !strings.Contains(errOut, `o\n::error`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	assertNoForgedLine(t, "stderr", errOut, false)
	assertNoForgedLine(t, "stdout", out, true)
}

// TestE2EProgress: a render that takes seconds is not silent. On a
// terminal (util-linux script gives the plugin one) a live line names the
// stage and the input after a second; in a log nothing but plain lines
// reaches stderr, and -v adds each stage's timing; stdout never carries
// progress.
func TestE2EProgress(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("util-linux script is not installed: no terminal to test on")
	}
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"kustomization.yaml": "resources:\n- http://" + silentServer(t) + "/remote.yaml\n",
	})
	bin := testutil.Bin(t, "kubectl-gate")
	cmd := exec.Command(script, "-qec", bin+" check -k . --timeout 3s 2>&1", "/dev/null")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "\r\x1b[Krendering 1 input(s): . (1s)") {
		t.Errorf("no live progress line on the terminal:\n%q", out)
	}
	stdout, stderr, code := runPiped(t, dir, "check", "-k", ".", "--timeout", "2s", "-v")
	if code != 3 || strings.ContainsRune(stderr, '\x1b') || strings.ContainsRune(stderr, '\r') || stdout != "" {
		t.Errorf("exit %d\nstdout:\n%q\nstderr:\n%q", code, stdout, stderr)
	}
}
