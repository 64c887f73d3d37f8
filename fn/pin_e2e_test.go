package fn_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// pinOverlay writes a kustomization with two Deployments using the given
// images and a Pin (or Gate) config listed under field.
func pinOverlay(t *testing.T, reg *testutil.Registry, kind, field string, images ...string) string {
	t.Helper()
	dir := t.TempDir()
	var res strings.Builder
	for i, img := range images {
		fmt.Fprintf(&res, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app-%d}\nspec:\n  selector: {matchLabels: {app: app-%d}}\n  template:\n    metadata: {labels: {app: app-%d}}\n    spec:\n      containers: [{name: c, image: %q}]\n", i, i, i, img)
	}
	res.WriteString("---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: app-0}, ports: [{port: 80}]}\n")
	cfg := fmt.Sprintf(`apiVersion: kubectl-gate.dev/v1alpha1
kind: %s
metadata:
  name: pin
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: %s
spec:
  images:
    insecureRegistries: [%s]
`, kind, testutil.Bin(t, "gate-fn"), reg.Host)
	files := map[string]string{
		"resources.yaml":     res.String(),
		"fn.yaml":            cfg,
		"kustomization.yaml": "resources: [resources.yaml]\n" + field + ":\n  - fn.yaml\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestE2EPinTransformerInKustomize(t *testing.T) {
	k := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	reg := testutil.StartRegistry(t)
	web := reg.PushImage(t, "shop/web:1.0")
	api := reg.PushIndex(t, "shop/api:2.0")
	dir := pinOverlay(t, reg, "Pin", "transformers", reg.Host+"/shop/web:1.0", reg.Host+"/shop/api:2.0")
	r := build(t, k, dir)
	if r.Code != 0 {
		t.Fatalf("kustomize build with the Pin transformer: exit %d\n%s", r.Code, r.Stderr)
	}
	for _, want := range []string{reg.Host + "/shop/web:1.0@" + web, reg.Host + "/shop/api:2.0@" + api, "kind: Service", "kubectl-gate.dev/pinned:"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Stdout)
		}
	}
	if n := strings.Count(r.Stdout, "kind: "); n != 3 {
		t.Errorf("%d objects in the output, want 3 (every resource passes through)", n)
	}
	// Under validators: kustomize rejects a function that changes resources.
	bad := build(t, k, pinOverlay(t, reg, "Pin", "validators", reg.Host+"/shop/web:1.0"))
	if bad.Code == 0 {
		t.Fatalf("a Pin under validators: passed:\n%s", bad.Stdout)
	}
	if !strings.Contains(bad.Stderr, "validator shouldn't modify the resource map") {
		t.Logf("kustomize's message changed; it still failed:\n%s", bad.Stderr)
	}
}

func TestE2EPinTransformerFailsClosed(t *testing.T) {
	k := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	reg := testutil.StartRegistry(t)
	dir := pinOverlay(t, reg, "Pin", "transformers", reg.Host+"/shop/missing:1.0")
	r := build(t, k, dir)
	if r.Code == 0 || !strings.Contains(r.Stderr, "[image-resolve]") {
		t.Fatalf("a tag the registry does not have: exit %d\n%s", r.Code, r.Stderr)
	}
	if strings.Contains(r.Stdout, "kind:") {
		t.Errorf("a failed build printed resources:\n%s", r.Stdout)
	}
}

// TestE2EPinSkippedWithoutEnableExec pins what the README says: without --enable-exec
// kustomize skips the exec Pin silently (exit 0, unpinned output), and
// `check --require-pinned-by` is what catches it.
func TestE2EPinSkippedWithoutEnableExec(t *testing.T) {
	k := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	reg := testutil.StartRegistry(t)
	reg.PushImage(t, "shop/web:1.0")
	dir := pinOverlay(t, reg, "Pin", "transformers", reg.Host+"/shop/web:1.0")
	r := testutil.Run(t, testutil.Root(t), "", nil, k, "build", "--enable-alpha-plugins", dir)
	if r.Code != 0 || !strings.Contains(r.Stdout, reg.Host+"/shop/web:1.0\n") {
		t.Fatalf("kustomize changed: without --enable-exec the Pin gave exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	c := testutil.Run(t, testutil.Root(t), r.Stdout, nil, testutil.Bin(t, "kubectl-gate"), "check", "-f", "-", "--require-pinned-by", "--rule", "image-digest=off")
	if c.Code != 1 || !strings.Contains(c.Stdout, "[image-pinned-by]") {
		t.Errorf("check --require-pinned-by on an unpinned build: exit %d\n%s", c.Code, c.Stdout)
	}
}
