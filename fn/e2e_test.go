package fn_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// kustomizeVersions are the CLIs the validators contract is pinned on:
// the current release and the one inside kubectl 1.32.
var kustomizeVersions = []struct{ env, name string }{
	{"KUSTOMIZE", "kustomize"},
	{"KUSTOMIZE_OLD", "kustomize (v5.5.0, inside kubectl 1.32)"},
}

// build runs `kustomize build --enable-alpha-plugins --enable-exec dir`
// with the built gate-fn in place.
func build(t *testing.T, kustomize, dir string, extra ...string) testutil.Result {
	t.Helper()
	testutil.Bin(t, "gate-fn")
	args := append([]string{"build", "--enable-alpha-plugins", "--enable-exec"}, extra...)
	return testutil.Run(t, testutil.Root(t), "", nil, kustomize, append(args, dir)...)
}

func TestE2EValidatorsContract(t *testing.T) {
	for _, v := range kustomizeVersions {
		t.Run(v.env, func(t *testing.T) {
			k := testutil.Tool(t, v.env, "kustomize")
			good := build(t, k, "examples/overlays/prod")
			if good.Code != 0 {
				t.Fatalf("good overlay: exit %d\n%s", good.Code, good.Stderr)
			}
			// A validator must emit items: [] and kustomize keeps the
			// originals (kustomize#5036): every resource is still there.
			for _, want := range []string{"kind: Deployment\nmetadata:\n  labels:\n    app.kubernetes.io/part-of: shop\n  name: web", "name: worker", "kind: Service"} {
				if !strings.Contains(good.Stdout, want) {
					t.Errorf("good overlay output lacks %q:\n%s", want, good.Stdout)
				}
			}
			if n := strings.Count(good.Stdout, "\nkind: ") + strings.Count(good.Stdout[:min(5, len(good.Stdout))], "kind"); n < 3 {
				t.Errorf("good overlay: %d objects in output, want 3:\n%s", n, good.Stdout)
			}
			bad := build(t, k, "examples/overlays/prod-retag")
			if bad.Code == 0 {
				t.Fatalf("bad overlay passed through kustomize build:\n%s", bad.Stdout)
			}
			want := `ERROR [image-digest] Deployment/worker (ns shop-prod) spec.template.spec.containers[0].image`
			if !strings.Contains(bad.Stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, bad.Stderr)
			}
		})
	}
}

// TestE2EGateUnderTransformersDeletesEverything pins the README's warning: the same
// items: [] under transformers: empties the build, which exits 0 — the
// reason for two kinds, gate-placement and render-empty.
func TestE2EGateUnderTransformersDeletesEverything(t *testing.T) {
	k := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	dir := misplacedOverlay(t)
	r := build(t, k, dir)
	if r.Code != 0 || strings.Contains(r.Stdout, "kind:") {
		t.Fatalf("kustomize changed: a Gate under transformers gave exit %d and output:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The plugin catches the misplacement instead of passing an empty render.
	g := testutil.Run(t, testutil.Root(t), "", nil, testutil.Bin(t, "kubectl-gate"), "check", "-k", dir)
	if g.Code != 1 || !strings.Contains(g.Stdout, "[gate-placement]") || !strings.Contains(g.Stdout, "under transformers:") {
		t.Errorf("check -k on a Gate under transformers: exit %d\n%s%s", g.Code, g.Stdout, g.Stderr)
	}
}

// misplacedOverlay writes an overlay that lists the Gate under transformers:.
func misplacedOverlay(t *testing.T) string {
	t.Helper()
	root := testutil.Root(t)
	dir, err := os.MkdirTemp(filepath.Join(root, "examples", "overlays"), "tmp-misplaced-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	gate, err := os.ReadFile(filepath.Join(root, "examples/overlays/prod/gate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	prod, err := os.ReadFile(filepath.Join(root, "examples/overlays/prod/kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kust := strings.Replace(string(prod), "validators:", "transformers:", 1)
	for name, data := range map[string]string{"gate.yaml": string(gate), "kustomization.yaml": kust} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel, _ := filepath.Rel(root, dir)
	return rel
}
