package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
)

const hostilePod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: nginx:latest}]}\n"

// A validators:/transformers: entry is read as kustomize's load restrictor
// allows, before kustomize reads it: a committed symlink to /dev/zero, a
// FIFO or a config outside the root must not be read (they exhausted memory,
// blocked forever, or loaded a config kustomize refuses).
func TestGateEntriesStayInsideTheRoot(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "gate.yaml"), []byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec: {rules: {image-digest: \"off\"}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
		none  bool // --load-restrictor LoadRestrictionsNone
	}{
		{"symlink to /dev/zero without the restrictor", func(t *testing.T, dir string) {
			must(t, os.Symlink("/dev/zero", filepath.Join(dir, "gate.yaml")))
		}, "not a regular file", true},
		{"symlink to /dev/zero", func(t *testing.T, dir string) {
			must(t, os.Symlink("/dev/zero", filepath.Join(dir, "gate.yaml")))
		}, "load restrictor", false},
		{"fifo", func(t *testing.T, dir string) {
			must(t, syscall.Mkfifo(filepath.Join(dir, "gate.yaml"), 0o644))
		}, "not a regular file", false},
		{"symlink out of the root", func(t *testing.T, dir string) {
			must(t, os.Symlink(filepath.Join(outside, "gate.yaml"), filepath.Join(dir, "gate.yaml")))
		}, "load restrictor", false},
		{"typo in the Gate", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "gate.yaml"), []byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec: {images: {digests: off}}\n"), 0o644))
		}, `unknown field "spec.images.digests"`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			must(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [pod.yaml]\nvalidators: [gate.yaml]\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "pod.yaml"), []byte(hostilePod), 0o644))
			c.setup(t, dir)
			done := make(chan error, 1)
			go func() { _, err := Kustomize(dir, Options{LoadRestrictorNone: c.none}); done <- err }()
			select {
			case err := <-done:
				var ue *config.UsageError
				if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ue) {
					t.Fatalf("err = %v; want a usage error saying %q", err, c.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the render blocked")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
