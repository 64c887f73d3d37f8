package kustomization_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/kustomization"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	digestA = "sha256:4315c8fd5a82533f56a83922bc1d5a2cff2b1f1e76117f66673abbcffd6c9fff"
	digestB = "sha256:" + "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0"
)

func write(t *testing.T, name, text string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFile(t *testing.T) {
	p := write(t, "kustomization.yml", "resources: []\n")
	if got, err := kustomization.File(filepath.Dir(p)); err != nil || got != p {
		t.Errorf("File = %q, %v; want %q", got, err, p)
	}
	if _, err := kustomization.File(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no kustomization file") {
		t.Errorf("err = %v", err)
	}
}

// TestSetDigests: existing entries (by newName, else name) get digest:,
// other repositories are added in order, comments, indentation and mode
// are kept.
func TestSetDigests(t *testing.T) {
	p := write(t, "kustomization.yaml", `# prod overlay
resources:
  - ../base
images:
  - name: web            # the storefront
    newName: ghcr.io/shop/web
    newTag: "1.4.2"
  - name: nginx
`)
	changes, err := kustomization.SetDigests(p, map[string]string{"ghcr.io/shop/web": digestA, "ghcr.io/shop/worker": digestB, "nginx": digestB})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range changes {
		lines = append(lines, c.String())
	}
	want := []string{"images[ghcr.io/shop/web].digest = " + digestA, "images[nginx].digest = " + digestB, "images += {name: ghcr.io/shop/worker, digest: " + digestB + "}"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	data, _ := os.ReadFile(p)
	got := string(data)
	for _, s := range []string{"# prod overlay", "# the storefront", "  - ../base", "    digest: " + digestA, "  - name: ghcr.io/shop/worker\n    digest: " + digestB} {
		if !strings.Contains(got, s) {
			t.Errorf("file lacks %q:\n%s", s, got)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(filepath.Dir(p)); len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
}

// TestSetDigestsLeavesABrokenFileAlone: on failure the file is
// byte-identical.
func TestSetDigestsLeavesABrokenFileAlone(t *testing.T) {
	const broken = "images: {name: web\n"
	p := write(t, "kustomization.yaml", broken)
	if _, err := kustomization.SetDigests(p, map[string]string{"web": digestA}); err == nil {
		t.Fatal("a broken file was edited")
	}
	if data, _ := os.ReadFile(p); string(data) != broken {
		t.Errorf("file changed:\n%s", data)
	}
}

// TestDigestsToWrite: only repositories left unpinned in the source get a
// digest written.
func TestDigestsToWrite(t *testing.T) {
	source := parseYAML(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - {name: web, image: "ghcr.io/shop/web:1.4.2"}
      - {name: proxy, image: "nginx@`+digestB+`"}
`)
	unpinned := kustomization.UnpinnedRepos(source, nil)
	if !unpinned["ghcr.io/shop/web"] || unpinned["nginx"] || len(unpinned) != 1 {
		t.Fatalf("unpinned = %v", unpinned)
	}
	pinned := parseYAML(t, strings.Replace(streamOf(source), "ghcr.io/shop/web:1.4.2", "ghcr.io/shop/web:1.4.2@"+digestA, 1))
	got := kustomization.PinnedDigests(pinned, nil, unpinned)
	if len(got) != 1 || got["ghcr.io/shop/web"] != digestA {
		t.Errorf("digests = %v", got)
	}
}

func streamOf(nodes []*yaml.RNode) string {
	var b strings.Builder
	for _, n := range nodes {
		b.WriteString(n.MustString())
	}
	return b.String()
}

func parseYAML(t *testing.T, text string) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(text), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}
