package kustomization_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/kustomization"
)

// FuzzSetDigests: whatever a kustomization file holds, SetDigests either
// writes a file that parses again or fails and leaves it byte-identical.
// Seeds: testdata/fuzz/FuzzSetDigests and the cases below.
func FuzzSetDigests(f *testing.F) {
	f.Add("images:\n- name: web\n  newName: ghcr.io/shop/web\n")
	f.Add("resources: [../base]\n")
	f.Add("images: {name: web\n")
	f.Add("images: 3\n")
	f.Add("# only a comment\n")
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(t.TempDir(), "kustomization.yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := kustomization.SetDigests(p, map[string]string{"ghcr.io/shop/web": digestA, "nginx": digestB})
		data, rerr := os.ReadFile(p)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil && string(data) != text {
			t.Fatalf("failed (%v) but changed the file:\n%q\n→\n%q", err, text, data)
		}
		if err == nil {
			if _, err := kustomization.SetDigests(p, map[string]string{"nginx": digestB}); err != nil {
				t.Fatalf("the written file does not parse again: %v\n%s", err, data)
			}
		}
	})
}
