package fsbound

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tree builds a root with a file, a secret outside it, and the hostile
// entries the package must refuse.
func tree(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "repo"), filepath.Join(base, "secret")
	must(t, os.MkdirAll(filepath.Join(root, "chart", "templates"), 0o755))
	must(t, os.WriteFile(outside, []byte("TOKEN=hunter2\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "chart", "values.yaml"), []byte("a: 1\n"), 0o644))
	must(t, os.Symlink("values.yaml", filepath.Join(root, "chart", "inside.yaml")))
	must(t, os.Symlink(outside, filepath.Join(root, "abs.yaml")))
	must(t, os.Symlink("../secret", filepath.Join(root, "rel.yaml")))
	must(t, os.Symlink(filepath.Dir(outside), filepath.Join(root, "dirlink")))
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo.yaml"), 0o644))
	must(t, os.Symlink("/dev/zero", filepath.Join(root, "zero.yaml")))
	must(t, os.WriteFile(filepath.Join(root, "big.yaml"), make([]byte, 2048), 0o644))
	return root, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadFile(t *testing.T) {
	root, _ := tree(t)
	r, err := New(root, 1024)
	must(t, err)
	if b, err := r.ReadFile(filepath.Join(root, "chart", "inside.yaml")); err != nil || string(b) != "a: 1\n" {
		t.Errorf("a symlink inside the root: %q, %v", b, err)
	}
	for _, c := range []struct {
		path string
		want any
		msg  string
	}{
		{"abs.yaml", &EscapeError{}, "abs.yaml is a symlink that leaves"},
		{"rel.yaml", &EscapeError{}, "-> ../secret"},
		{"dirlink/secret", &EscapeError{}, "dirlink is a symlink that leaves"},
		{"zero.yaml", &EscapeError{}, "zero.yaml is a symlink"},
		{"fifo.yaml", &NotRegularError{}, "a FIFO"},
		{"big.yaml", &TooLargeError{}, "larger than 1024 bytes"},
		{"../secret", &OutsideError{}, "lies outside"},
	} {
		done := make(chan error, 1)
		go func() { _, err := r.ReadFile(filepath.Join(root, c.path)); done <- err }()
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the read blocked", c.path)
		}
		if err == nil || !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: got %v, want %q", c.path, err, c.msg)
		}
		if !errors.As(err, &c.want) {
			t.Errorf("%s: %T, want %T", c.path, err, c.want)
		}
	}
}

func TestOutsideAbsolute(t *testing.T) {
	root, outside := tree(t)
	r, err := New(root, 1024)
	must(t, err)
	var oe *OutsideError
	if _, err := r.ReadFile(outside); !errors.As(err, &oe) {
		t.Errorf("an absolute path outside: %v", err)
	}
}

func TestCheckTree(t *testing.T) {
	root, _ := tree(t)
	r, err := New(root, 1024)
	must(t, err)
	if err := r.CheckTree(filepath.Join(root, "chart")); err != nil {
		t.Errorf("a chart whose links stay inside: %v", err)
	}
	for _, name := range []string{"abs.yaml", "rel.yaml", "dirlink", "zero.yaml", "fifo.yaml", "big.yaml"} {
		sub := filepath.Join(root, "t-"+name)
		must(t, os.Mkdir(sub, 0o755))
		must(t, os.Rename(filepath.Join(root, name), filepath.Join(sub, name)))
		err := r.CheckTree(sub)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: want it refused by name, got %v", name, err)
		}
	}
}

func TestFor(t *testing.T) {
	base := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(base, "repo", ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(base, "repo", "apps", "web"), 0o755))
	if got := For(filepath.Join(base, "repo", "apps", "web")); got != filepath.Join(base, "repo") {
		t.Errorf("For = %s, want the repository", got)
	}
}
