package supervise

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestDevNullIsNotATerminal: /dev/null is a character device, and a run
// whose stdin is /dev/null (CI, tests, `cmd </dev/null`) was taken for a
// terminal, so the parent never forwarded SIGINT and the run went on to
// its deadline.
func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatal("/dev/null taken for a terminal: SIGINT would not be forwarded")
	}
}

// TestTerminalIsATerminal: the other side of TestDevNullIsNotATerminal, on
// a pseudo-terminal (its master end answers the terminal driver too).
func TestTerminalIsATerminal(t *testing.T) {
	f, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer f.Close()
	if !isTerminal(f) {
		t.Fatal("a pseudo-terminal not taken for a terminal: the child would be put in its own process group and stop on reading it")
	}
}

// TestFewImports: the binaries run the parent from a package initializer,
// and the Go specification initializes a package only after its imports,
// taking the packages in the order of their import paths. Each import that
// is initialized late (os/exec, runtime/debug, golang.org/x/term came
// after some 900 of the binary's 2,371 packages) makes the parent pay the
// start-up of every package before it, the cost the parent exists without.
func TestFewImports(t *testing.T) {
	allowed := map[string]bool{"bytes": true, "fmt": true, "io": true, "os": true, "os/signal": true,
		"runtime": true, "strconv": true, "syscall": true, "time": true, "unsafe": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if filepath.Ext(name) != ".go" || len(name) > len("_test.go") && name[len(name)-len("_test.go"):] == "_test.go" {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] && !(name == "supervise_other.go" && path == "golang.org/x/term") {
				t.Errorf("%s imports %s: the parent would start after it and after every package initialized before it", name, path)
			}
		}
	}
}
