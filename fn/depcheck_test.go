package fn_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestFunctionBinaryIsLean keeps cluster and CLI libraries out of gate-fn:
// it runs inside every `kustomize build`, often as a container image.
//
// One path is allowed: the API server's CEL environment (used by schema
// validation for CRD x-kubernetes-validations, internal/schema) reaches cobra
// through k8s.io/component-base/compatibility → component-base/cli/flag. No
// gate code imports cobra; any other importer still fails.
func TestFunctionBinaryIsLean(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \",\"}}", "./cmd/gate-fn")
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/gate-fn: %v", err)
	}
	forbidden := []string{"k8s.io/cli-runtime", "k8s.io/client-go", "github.com/spf13/cobra", "github.com/kubectl-gate/kubectl-gate/plugin"}
	allowedImporter := map[string]string{"github.com/spf13/cobra": "k8s.io/component-base/cli/flag"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, dep := range append([]string{pkg}, strings.Split(imports, ",")...) {
			for _, f := range forbidden {
				if dep != f && !strings.HasPrefix(dep, f+"/") {
					continue
				}
				if dep == pkg || allowedImporter[f] != pkg {
					if dep != pkg || allowedImporter[f] == "" {
						t.Errorf("gate-fn imports %s (via %s)", dep, pkg)
					}
				}
			}
		}
	}
}
