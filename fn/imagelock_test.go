package fn_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/fn"
)

// TestFunctionImageLock: the function holds the items to a lock written
// inline in its config, or kept among the items as local config; a lock
// path is refused (the function reads no files), never skipped.
func TestFunctionImageLock(t *testing.T) {
	const locked = "sha256:4315c8fd5a82533f56a83922bc1d5a2cff2b1f1e76117f66673abbcffd6c9fff"
	other := "sha256:" + strings.Repeat("9", 64)
	lock := func(indent string) string {
		return strings.ReplaceAll("apiVersion: kubectl-gate.dev/v1alpha1\nkind: ImageLock\nmetadata:\n  name: images\n  annotations: {config.kubernetes.io/local-config: \"true\"}\nspec:\n  images:\n  - {image: \"ghcr.io/shop/web:1.4.2\", digest: \""+locked+"\"}\n", "\n", "\n"+indent)
	}
	inline := "    images:\n      lock:\n        " + strings.TrimSuffix(lock("        "), "        ")
	item := "- " + strings.TrimSuffix(lock("  "), "  ")
	cases := []struct {
		name, spec, items string
		fails             bool
		says              string
	}{
		{"inline lock, render matches", inline, deploymentItem("web", "ghcr.io/shop/web:1.4.2@"+locked), false, ""},
		{"inline lock, digest changed", inline, deploymentItem("web", "ghcr.io/shop/web:1.4.2@"+other), true, "ERROR [image-lock]"},
		{"lock among the items, matches", "    {}\n", item + deploymentItem("web", "ghcr.io/shop/web:1.4.2@"+locked), false, ""},
		{"lock among the items, digest changed", "    {}\n", item + deploymentItem("web", "ghcr.io/shop/web:1.4.2@"+other), true, "the lock pins tag 1.4.2 to " + locked},
		{"a lock path", "    images: {lock: gate.lock}\n", deploymentItem("web", "ghcr.io/shop/web:1.4.2@"+locked), true, "is a path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := fn.Run(context.Background(), strings.NewReader(gateList(c.spec, c.items)), &out, &errOut, "test")
			if failed := err != nil; failed != c.fails {
				t.Fatalf("err = %v, want fails=%v\nstderr:\n%s", err, c.fails, errOut.String())
			}
			if c.fails && c.says != "is a path" && !errors.Is(err, fn.ErrFindings) {
				t.Errorf("err = %v, want findings", err)
			}
			if !strings.Contains(errOut.String(), c.says) {
				t.Errorf("stderr lacks %q:\n%s", c.says, errOut.String())
			}
		})
	}
}
