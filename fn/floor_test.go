package fn_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/fn"
)

var unpinnedImage = deploymentItem("web", "ghcr.io/shop/web:latest")

// TestTrustedFloor: the repository's own functionConfig turns image-digest
// off. Without KUBECTL_GATE_CONFIG it decides (the red app passes); with
// the floor it may only tighten, so the app stays red; a floor that allows
// in-tree loosening lets it decide again; an unreadable floor is no verdict.
func TestTrustedFloor(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	floor := write("floor.yaml", "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: platform}\nspec: {}\n")
	loose := write("loose.yaml", "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: platform}\nspec: {allowInTreeLoosening: true}\n")
	cases := []struct {
		name, floor string
		fails       bool
		says        string
	}{
		{"no floor: the repository's config decides", "", false, ""},
		{"floor set: image-digest off cannot loosen it", floor, true, "ERROR [image-digest]"},
		{"floor allows loosening", loose, false, ""},
		{"floor unreadable", filepath.Join(dir, "missing.yaml"), true, "KUBECTL_GATE_CONFIG=" + filepath.Join(dir, "missing.yaml")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(fn.EnvTrustedConfig, c.floor)
			var out, errOut bytes.Buffer
			err := fn.Run(context.Background(), strings.NewReader(gateList("    rules: {image-digest: \"off\"}\n", unpinnedImage)), &out, &errOut, "test")
			if (err != nil) != c.fails || (c.fails && !strings.Contains(errOut.String(), c.says)) {
				t.Fatalf("err = %v, want fails=%v with %q on stderr:\n%s", err, c.fails, c.says, errOut.String())
			}
			if c.floor == floor && !errors.Is(err, fn.ErrFindings) {
				t.Errorf("err = %v, want the findings error", err)
			}
		})
	}
}
