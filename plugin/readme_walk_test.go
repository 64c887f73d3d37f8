package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// The README walk (issue 22): every command of README.md and
// examples/*/README.md whose comment starts with `exit N` is run from the
// root of a fresh clone and must exit N. The READMEs carry the expected
// codes, so the walk is theirs, not a list kept here:
//
//	kubectl gate check -k examples/overlays/prod   # exit 0: …
//
// A command line sits in a code block (indented four spaces, or fenced).
// In examples/*/README.md every kubectl or kustomize command must carry its
// code: those READMEs are about this repository's own examples.

// walkCmd is one annotated command of a README.
type walkCmd struct {
	file string // README, relative to the repository root
	line int
	cmd  string
	exit int
}

// exitNote is a command's trailing comment naming its exit code.
var exitNote = regexp.MustCompile(`^(.*?)\s+#\s*exit (\d+)\b`)

// readmeCommands returns the annotated commands of one README, and the
// code lines that look like a command but carry no code (unannotated).
func readmeCommands(file, text string) (cmds []walkCmd, unannotated []string) {
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		var code string
		switch {
		case fenced:
			code = strings.TrimSpace(line)
		case strings.HasPrefix(line, "    "):
			code = strings.TrimSpace(line)
		default:
			continue
		}
		if m := exitNote.FindStringSubmatch(code); m != nil {
			exit, _ := strconv.Atoi(m[2])
			cmds = append(cmds, walkCmd{file: file, line: n, cmd: strings.TrimSpace(m[1]), exit: exit})
			continue
		}
		if strings.HasPrefix(code, "kubectl ") || strings.HasPrefix(code, "kustomize ") {
			unannotated = append(unannotated, fmt.Sprintf("%s:%d: %s", file, n, code))
		}
	}
	return cmds, unannotated
}

func TestREADMECommandsParse(t *testing.T) {
	md := "text\n\n    kubectl gate check -k a   # exit 1: red\n    kubectl gate rules\n\n" +
		"```sh\nkustomize build x | kubectl gate check -f -  # exit 0\n```\n" +
		"not code # exit 3\n    echo 'a # b'   # exit 2\n"
	cmds, bare := readmeCommands("R.md", md)
	want := []walkCmd{
		{"R.md", 3, "kubectl gate check -k a", 1},
		{"R.md", 7, "kustomize build x | kubectl gate check -f -", 0},
		{"R.md", 10, "echo 'a # b'", 2},
	}
	if fmt.Sprint(cmds) != fmt.Sprint(want) {
		t.Errorf("commands %v, want %v", cmds, want)
	}
	if len(bare) != 1 || !strings.HasSuffix(bare[0], "R.md:4: kubectl gate rules") {
		t.Errorf("unannotated %q, want the rules line", bare)
	}
}

// TestE2EREADMEWalk runs the annotated commands on a fresh clone of the
// repository (git clone of this checkout's HEAD), with the built binaries
// in the clone's bin/ (what `make build` makes there) and on PATH, and the
// kustomize of the Makefile on PATH as kustomize.
func TestE2EREADMEWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	root := testutil.Root(t)
	kustomize := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	testutil.Tool(t, "KUBECTL", "kubectl")
	clone := filepath.Join(t.TempDir(), "kubectl-gate")
	if r := testutil.Run(t, root, "", nil, "git", "clone", "--quiet", root, clone); r.Code != 0 {
		t.Fatalf("git clone: %s", r.Stderr)
	}
	bin := filepath.Join(clone, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kubectl-gate", "gate-fn", "kubectl_complete-gate"} {
		copyFile(t, testutil.Bin(t, name), filepath.Join(bin, name))
	}
	copyFile(t, kustomize, filepath.Join(bin, "kustomize"))

	files := []string{"README.md"}
	examples, err := filepath.Glob(filepath.Join(clone, "examples", "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range examples {
		rel, _ := filepath.Rel(clone, f)
		files = append(files, filepath.ToSlash(rel))
	}
	var all []walkCmd
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(clone, f))
		if err != nil {
			t.Fatal(err)
		}
		cmds, bare := readmeCommands(f, string(b))
		if len(cmds) == 0 {
			t.Errorf("%s: no command annotated with its exit code (`# exit N`)", f)
		}
		if f != "README.md" {
			for _, b := range bare {
				t.Errorf("%s: a command of the examples without its exit code (`# exit N`)", b)
			}
		}
		all = append(all, cmds...)
	}
	if len(all) < 15 {
		t.Errorf("%d annotated commands in %v, want the README's usage blocks walked (at least 15)", len(all), files)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	for _, c := range all {
		code, out := runWalk(t, clone, env, c.cmd)
		if code != c.exit {
			t.Errorf("%s:%d: `%s`: exit %d, the README says %d\n%s", c.file, c.line, c.cmd, code, c.exit, out)
		}
	}
}

// runWalk runs a README command with bash (pipefail: a failing stage of a
// pipeline fails the command) in dir, bounded by a deadline.
func runWalk(t *testing.T, dir string, env []string, command string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", command)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("`%s`: %v", command, ctx.Err())
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	case err != nil:
		t.Fatalf("`%s`: %v", command, err)
	}
	return 0, string(out)
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
