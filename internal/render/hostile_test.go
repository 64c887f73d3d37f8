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

// A file kustomize reads with an alias inside its own anchor (kyaml's
// reader recursed until the stack overflowed: the run died after seconds
// with a runtime trace) or a "billion laughs" (kyaml expanded it for
// minutes) is refused by name at once, in a resource, a patch and the
// kustomization itself; an ordinary alias still renders.
func TestRecursiveAliasesRefused(t *testing.T) {
	const cycle = "apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: c\n  labels: *m\n"
	laughs := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a0: &a0 [lol]\n"
	for i := 1; i <= 9; i++ {
		laughs += "  a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.Repeat("*a"+string(rune('0'+i-1))+", ", 8) + "*a" + string(rune('0'+i-1)) + "]\n"
	}
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	for _, tc := range []struct {
		name, kustomization, file, content, want string
	}{
		{"resource cycle", "resources: [cm.yaml]\n", "cm.yaml", cycle, "cm.yaml: document 1 (counting from 1): line 5: alias *m is inside"},
		{"resource laughs", "resources: [cm.yaml]\n", "cm.yaml", laughs, "cm.yaml: document 1 (counting from 1): excessive aliasing"},
		{"JSON resource cycle", "resources: [cm.json]\n", "cm.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":&d {"a":*d}}`, "alias *d is inside"},
		{"patch cycle", "resources: [base.yaml]\npatches: [{path: cm.yaml}]\n", "cm.yaml", cycle, "alias *m is inside"},
		{"kustomization cycle", "resources: &r [base.yaml]\nlabels: [{pairs: *r}]\nx: &k {y: *k}\n", "", "", "alias *k is inside"},
		// go-yaml breaks lines at LINE SEPARATOR and NEL too: a node starts
		// after one (an alias there slipped past the check).
		{"resource cycle after a LINE SEPARATOR", "resources: [cm.yaml]\n", "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\ndata: &a {b: [\u2028*a]}\n", "cm.yaml: document 1 (counting from 1): line 4: alias *a is inside"},
		{"resource laughs after NELs", "resources: [cm.yaml]\n", "cm.yaml", strings.NewReplacer(" *", "\u0085*", "[*", "[\u0085*").Replace(laughs), "cm.yaml: document 1 (counting from 1): excessive aliasing"},
		{"ordinary alias", "resources: [cm.yaml]\n", "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n c\n  labels: {app: *n}\n", ""},
		{"ordinary alias after a LINE SEPARATOR", "resources: [cm.yaml]\n", "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n c\n  labels: {app: [\u2028*n]}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			must(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(tc.kustomization), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(cm), 0o644))
			if tc.file != "" {
				must(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.content), 0o644))
			}
			// With --load-restrictor LoadRestrictionsNone kustomize reads
			// each of the kustomization's three names: the two that are not
			// there are not errors.
			for _, none := range []bool{false, true} {
				start := time.Now()
				res, err := Kustomize(dir, Options{LoadRestrictorNone: none})
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("took %v", took)
				}
				if tc.want == "" {
					if err != nil || len(res.Resources) != 1 {
						t.Fatalf("an ordinary alias (LoadRestrictionsNone %v): %v", none, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("LoadRestrictionsNone %v: got %v, want an error with %q", none, err, tc.want)
				}
			}
		})
	}
}
