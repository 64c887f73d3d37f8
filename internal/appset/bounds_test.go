package appset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
)

const boundHead = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: bomb, namespace: argocd}\nspec:\n"

const boundTemplate = "  template:\n    metadata: {name: '{{.name}}'}\n    spec:\n      project: default\n      source: {repoURL: https://example.com/r.git, path: apps}\n      destination: {server: https://kubernetes.default.svc, namespace: x}\n"

// elements returns a list generator of n elements, as YAML.
func elements(n int, key string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "      - list:\n          elements:\n")
	for i := range n {
		fmt.Fprintf(&b, "          - {%s: '%s%d'}\n", key, key, i)
	}
	return b.String()
}

// A matrix whose product is over the cap is refused before the product is
// made; a template that multiplies a small input stops at the output cap
// (issue 18: a 258 KB ApplicationSet with a 10k × 10k matrix, a 461-byte
// one with repeat of repeat).
func TestExpansionCaps(t *testing.T) {
	matrix := boundHead + "  goTemplate: true\n  generators:\n  - matrix:\n      generators:\n" + elements(10000, "a") + elements(10000, "b") +
		strings.Replace(boundTemplate, "{{.name}}", "{{.a}}-{{.b}}", 1)
	repeat := boundHead + "  goTemplate: true\n  generators:\n  - list:\n      elements: [{name: a}]\n" +
		strings.Replace(boundTemplate, "{{.name}}", `{{ repeat 100000 (repeat 100000 "x") }}`, 1)
	output := boundHead + "  goTemplate: true\n  generators:\n  - list:\n      elements: [{name: a}]\n" +
		strings.Replace(boundTemplate, "{{.name}}", `{{ range until 100000 }}{{ repeat 1000 "x" }}{{ end }}`, 1)
	list := boundHead + "  generators:\n" + strings.Replace(elements(10001, "name"), "      - list", "  - list", 1) + boundTemplate
	for name, c := range map[string]struct{ doc, want string }{
		"10k × 10k matrix":    {matrix, "spec.generators[0].matrix: 100000000 generated param sets over the cap of 10000"},
		"repeat of repeat":    {repeat, "over the output cap"},
		"output over the cap": {output, "the text its templates render over the cap of 67108864"},
		"list over the cap":   {list, "10001 generated param sets over the cap of 10000"},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := Expand(parse(t, c.doc), Options{Root: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want %q, got %v", c.want, err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// The git files generator reads through the checkout's boundary: a
// symlink out of it is refused by name and what it points at reaches no
// Application; a FIFO is not waited on.
func TestGitFilesBoundary(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	if err := os.MkdirAll(filepath.Join(root, "clusters"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "token.json"), []byte(`{"name": "ghp-secret-token"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := boundHead + "  goTemplate: true\n  generators:\n  - git:\n      repoURL: https://example.com/r.git\n      revision: HEAD\n      files: [{path: 'clusters/*.json'}]\n" + boundTemplate
	if err := os.Symlink("../../token.json", filepath.Join(root, "clusters", "prod.json")); err != nil {
		t.Fatal(err)
	}
	_, err := Expand(parse(t, doc), Options{Root: root})
	var esc *fsbound.EscapeError
	if !errors.As(err, &esc) || !strings.Contains(err.Error(), "clusters/prod.json") || strings.Contains(err.Error(), "ghp-secret") {
		t.Fatalf("want the symlink refused by name, got %v", err)
	}
	if err := os.Remove(filepath.Join(root, "clusters", "prod.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "clusters", "prod.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Expand(parse(t, doc), Options{Root: root}); done <- err }()
	select {
	case err := <-done:
		var nr *fsbound.NotRegularError
		if !errors.As(err, &nr) {
			t.Fatalf("want the FIFO refused, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the git files generator waited on a FIFO")
	}
}
