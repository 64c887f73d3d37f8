package fn_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestFunctionBinaryIsLean keeps CLI, cluster-access and render libraries
// out of gate-fn: it runs inside every `kustomize build`, often as a
// container image, and kustomize has rendered already.
//
// Since the function evaluates ValidatingAdmissionPolicies as check -k
// does (README "Policies"), it links the API server's admission library,
// which is built on client-go's informers, listers and clients. Those are
// allowed only as that library (k8s.io/apiserver), component-base's
// tracing, and internal/policy (which hands the admission plugin its
// in-memory informers) import them, and Kubernetes' feature list (read by
// its validation of built-in kinds, internal/apivalidation) imports
// client-go's feature-gate names, and its validation of webhook
// configurations (internal/apivalidation/webhooks) client-go's JSONPath
// parser; nothing else may reach client-go. The
// API server's CEL environment reaches cobra through
// k8s.io/component-base/cli/flag; no gate code imports cobra. cli-runtime,
// kustomize's renderer, Helm and the plugin's and pipeline's packages stay
// out entirely.
func TestFunctionBinaryIsLean(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \",\"}}", "./cmd/gate-fn")
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/gate-fn: %v", err)
	}
	const gate = "github.com/kubectl-gate/kubectl-gate/"
	forbidden := []string{"k8s.io/cli-runtime", "k8s.io/client-go", "github.com/spf13/cobra", "sigs.k8s.io/kustomize/api", "helm.sh/helm",
		gate + "plugin", gate + "internal/pipeline", gate + "internal/render", gate + "internal/helm"}
	// allowed maps a forbidden module to the importers (prefixes) that may
	// bring it in.
	allowed := map[string][]string{
		"github.com/spf13/cobra": {"k8s.io/component-base/cli/flag"},
		"k8s.io/client-go":       {"k8s.io/apiserver/", "k8s.io/component-base/tracing", gate + "internal/policy", "k8s.io/kubernetes/pkg/features", "k8s.io/kubernetes/pkg/apis/admissionregistration/validation"},
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, dep := range strings.Split(imports, ",") {
			for _, f := range forbidden {
				if !within(dep, f) || within(pkg, f) {
					continue
				}
				if !allowedImporter(pkg, allowed[f]) {
					t.Errorf("gate-fn imports %s (via %s)", dep, pkg)
				}
			}
		}
		for _, f := range forbidden {
			if within(pkg, f) && allowed[f] == nil {
				t.Errorf("gate-fn links %s", pkg)
			}
		}
	}
}

func within(pkg, module string) bool { return pkg == module || strings.HasPrefix(pkg, module+"/") }

func allowedImporter(pkg string, prefixes []string) bool {
	for _, p := range prefixes {
		if pkg == p || strings.HasPrefix(pkg, p) {
			return true
		}
	}
	return false
}
