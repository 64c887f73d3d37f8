package depcheck_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

const module = "github.com/kubectl-gate/kubectl-gate"

// deps returns every package pkg imports, directly or not (go list -deps).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// allowed are packages under a forbidden prefix that hold no client:
// k8s.io/client-go/features only names feature gates, and Kubernetes'
// own feature list (read by internal/apivalidation) imports it.
var allowed = map[string]bool{"k8s.io/client-go/features": true}

// forbid fails for every dependency of pkg under one of the prefixes.
func forbid(t *testing.T, pkg string, prefixes ...string) {
	t.Helper()
	for _, dep := range deps(t, pkg) {
		if dep == pkg || allowed[dep] {
			continue
		}
		for _, f := range prefixes {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("%s imports %s", strings.TrimPrefix(pkg, module+"/"), dep)
			}
		}
	}
}

// TestVocabularyIsBelowTheRules: the shared vocabulary, the renderer, the
// cluster reader and the printers never import the rules or the engine, so
// adding a rule never touches them and they never need a rule to speak.
func TestVocabularyIsBelowTheRules(t *testing.T) {
	for _, pkg := range []string{"finding", "manifest", "argo", "config", "images", "yamlpath", "render", "live", "report", "resolve"} {
		forbid(t, module+"/internal/"+pkg, module+"/internal/rules", module+"/internal/gate", module+"/internal/selftest")
	}
}

// TestFindingIsALeaf: finding imports nothing of the project.
func TestFindingIsALeaf(t *testing.T) {
	forbid(t, module+"/internal/finding", module)
}

// TestRulesDoNotReachTheShellsOrTheNetwork: a rule sees resources and
// configuration, never the shells, the renderer, a registry client or a
// cluster.
func TestRulesDoNotReachTheShellsOrTheNetwork(t *testing.T) {
	forbid(t, module+"/internal/rules/all", module+"/plugin", module+"/fn", module+"/cmd",
		module+"/internal/render", module+"/internal/resolve", module+"/internal/live",
		"k8s.io/client-go", "github.com/google/go-containerregistry/pkg/v1/remote")
}

// TestCoreDoesNotImportTheShells: internal/* never imports fn, plugin or cmd.
func TestCoreDoesNotImportTheShells(t *testing.T) {
	cmd := exec.Command("go", "list", module+"/internal/...")
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		forbid(t, pkg, module+"/fn", module+"/plugin", module+"/cmd")
	}
}

// TestPluginGoesThroughThePipeline: the kubectl shell is flags → options →
// pipeline → report; it imports none of what renders, expands or checks
// directly (internal/pipeline does), and status reads the cluster through
// internal/live.
func TestPluginGoesThroughThePipeline(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, module+"/plugin")
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, pkg := range []string{"render", "appset", "flux", "helm", "argo", "schema", "policy", "gate"} {
			if f := module + "/internal/" + pkg; dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("plugin imports %s: go through internal/pipeline", dep)
			}
		}
	}
}
