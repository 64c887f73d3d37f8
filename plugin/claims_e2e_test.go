package plugin

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// Claims of the README and the examples that once failed when tried
// (issue 22); the README walk (readme_walk_test.go) runs their commands,
// these pin what the walk's exit codes do not show.

// TestE2ESelftestOutputs: selftest's help lists the formats it prints, and
// every other format of check is exit 2 naming them (issue 22: sarif,
// junit, github and yaml were listed and exit 2).
func TestE2ESelftestOutputs(t *testing.T) {
	root := testutil.Root(t)
	r := runGate(t, root, "selftest", "--help")
	var line string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.Contains(l, "--output") {
			line = l
		}
	}
	if r.Code != 0 || !strings.Contains(line, "text|json") || strings.Contains(line, "sarif") {
		t.Errorf("selftest --help: exit %d, -o line %q, want text|json only", r.Code, line)
	}
	for _, o := range []string{"sarif", "junit", "github", "gitlab", "yaml"} {
		r := runGate(t, root, "selftest", "-k", "examples/overlays/prod", "-o", o)
		if r.Code != 2 || !strings.Contains(r.Stderr, "text or json") {
			t.Errorf("selftest -o %s: exit %d, want 2 naming text or json:\n%s", o, r.Code, r.Stderr)
		}
	}
}

// TestE2ESharedObjectNotDuplicate: two Applications rendering the same
// object are app-shared-object naming both, never render-duplicate (issue
// 22: the README claimed render-duplicate for it).
func TestE2ESharedObjectNotDuplicate(t *testing.T) {
	r := runGate(t, testutil.Root(t), "check", "-f", "examples/helm/apps/", "--apps-root", ".", "--repo-url", examplesRepo, "--config", "examples/helm/gate.yaml")
	if r.Code != 1 || strings.Contains(r.Stdout, "render-duplicate") ||
		!says(r.Stdout, "Application/shop-bluegreen (ns argocd)\n  WARNING [app-shared-object]: CustomResourceDefinition/shopconfigs.example.com is rendered identically by Application argocd/shop-bluegreen-fast") {
		t.Errorf("exit %d, want 1 with app-shared-object naming both Applications and no render-duplicate:\n%s", r.Code, r.Stdout)
	}
}

// TestMakeDemoKustomize: `make demo` builds the one kustomize it runs, not
// the old version the compatibility tests use (issue 22: "offline"
// downloaded two).
func TestMakeDemoKustomize(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not on PATH")
	}
	tools := t.TempDir()
	r := testutil.Run(t, testutil.Root(t), "", nil, "make", "-n", "demo", "TOOLS="+tools)
	if r.Code != 0 {
		t.Fatalf("make -n demo: exit %d\n%s", r.Code, r.Stderr)
	}
	var installs []string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.Contains(l, " install ") && strings.Contains(l, "sigs.k8s.io/kustomize/kustomize") {
			installs = append(installs, l)
		}
	}
	if len(installs) != 1 {
		t.Errorf("make demo installs %d kustomize versions, want the one it runs:\n%s", len(installs), strings.Join(installs, "\n"))
	}
}
