package plugin

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzUpdateImages feeds the kustomization write-back arbitrary files
// (seeds in testdata/fuzz/FuzzUpdateImages): no panic; a refused file is
// left byte for byte as it was; a rewritten one parses and pins the repo.
func FuzzUpdateImages(f *testing.F) {
	f.Add([]byte("resources: [../base]\nimages:\n- name: nginx\n  newTag: latest\n"), "nginx")
	f.Add([]byte("images:\n  - name: a\n    newName: reg:5000/b\n"), "reg:5000/b")
	f.Add([]byte("# only a comment\n"), "app")
	f.Add([]byte("images: {a: 1}\n"), "a")
	f.Add([]byte("images: [1, [2], null]\n"), "x")
	f.Add([]byte("a: &x {b: 1}\nc: *x\n"), "x")
	f.Add([]byte("- a\n"), "a")
	digest := "sha256:" + strings.Repeat("ab", 32)
	f.Fuzz(func(t *testing.T, data []byte, repo string) {
		if repo == "" {
			return
		}
		path := filepath.Join(t.TempDir(), "kustomization.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		err := updateImages(path, map[string]string{repo: digest}, io.Discard)
		got, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if !bytes.Equal(got, data) {
				t.Fatalf("refused (%v) but the file changed:\n%s", err, got)
			}
			return
		}
		if _, err := yaml.Parse(string(got)); err != nil {
			t.Fatalf("rewritten file does not parse: %v\n%s", err, got)
		}
		if !strings.Contains(string(got), digest) {
			t.Fatalf("rewritten file lacks the digest:\n%s", got)
		}
	})
}
