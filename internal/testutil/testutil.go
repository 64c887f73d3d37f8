package testutil

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Update is the -update flag: golden files are rewritten, never otherwise.
var Update = flag.Bool("update", false, "rewrite golden files")

// Root returns the repository root (the directory holding go.mod).
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Corpus returns testdata/corpus, the real manifests from upstream
// projects vendored with their licenses (testdata/corpus/PROVENANCE.md).
// It is part of the repository: a missing corpus fails the test.
func Corpus(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(Root(t), "testdata", "corpus")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("vendored corpus: %v", err)
	}
	return dir
}

// CorpusYAML calls each with the path and content of every .yaml and .yml
// file of the vendored corpus, in walk order.
func CorpusYAML(t testing.TB, each func(path string, data []byte)) {
	t.Helper()
	YAMLFiles(t, Corpus(t), each)
}

// YAMLFiles calls each with the path and content of every .yaml and .yml
// file under dir, in walk order.
func YAMLFiles(t testing.TB, dir string, each func(path string, data []byte)) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (!strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".yml")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		each(path, data)
		return nil
	})
	if err != nil {
		t.Fatalf("reading the YAML files under %s: %v", dir, err)
	}
}

// Bin returns the path of a built binary in bin/. Tests of the shells run
// the real binaries. It rebuilds the binary (go's cache makes that a relink)
// unless GATE_BIN_FRESH is set, as `make test` sets it right after building,
// so a plain `go test` never runs a stale binary.
func Bin(t testing.TB, name string) string {
	t.Helper()
	root := Root(t)
	path := filepath.Join(root, "bin", name)
	binMu.Lock()
	defer binMu.Unlock()
	if _, err := os.Stat(path); err != nil || (os.Getenv("GATE_BIN_FRESH") == "" && !built[name]) {
		// Build beside the target and rename: test packages run in
		// parallel, and a rename never leaves a half-written binary.
		tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
		cmd := exec.Command("go", "build", "-o", tmp, "./cmd/"+name)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", name, err, out)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatalf("installing %s: %v", name, err)
		}
		built[name] = true
	}
	return path
}

var (
	binMu sync.Mutex
	built = map[string]bool{}
)

// Golden compares got with testdata/NAME, rewriting it with -update.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden %s (run with -update to create it): %v", path, err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the golden file (review, then -update):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// WriteFiles writes files (slash path → content) under dir, creating
// directories, and returns dir.
func WriteFiles(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Says reports whether text output says want. A want of the form
// "Kind/name (ns x)\n  SEVERITY [rule] rest" is a finding under its object:
// a header line naming the object (then, maybe, " [its file]") and, indented
// below it before the next header, a line containing the second part.
// Any other want is a plain substring.
func Says(out, want string) bool {
	ref, rest, ok := strings.Cut(want, "\n  ")
	if !ok || strings.Contains(ref, "\n") {
		return strings.Contains(out, want)
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if l != ref && !strings.HasPrefix(l, ref+" [") {
			continue
		}
		for _, f := range lines[i+1:] {
			if !strings.HasPrefix(f, "  ") {
				break
			}
			if strings.Contains(f, rest) {
				return true
			}
		}
	}
	return false
}

// RunSelf runs the test binary again with only the test named test
// (-test.run=^test$) and env added to the environment, and returns its
// exit code and standard error: how a test watches a process end (a
// crash, a kill, a memory cap) that it cannot survive in its own. A
// binary that cannot be started fails t.
func RunSelf(t testing.TB, test string, env ...string) (code int, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), errOut.String()
	} else if err != nil {
		t.Fatalf("running %s again: %v", test, err)
	}
	return 0, errOut.String()
}

// ImageShapes are image references of every shape the API server's
// pull-policy defaulting tells apart: no tag, "latest" and "LATEST", a
// tag, a digest, a tag and a digest, a registry with a port, one that does
// not parse, and none.
var ImageShapes = []string{
	"nginx", "nginx:latest", "nginx:1.27", "ghcr.io/org/app:v1", "ghcr.io/org/app",
	"ghcr.io/org/app@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	"ghcr.io/org/app:latest@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	"localhost:5000/app", "NotValid:::", "", "app:LATEST",
}
