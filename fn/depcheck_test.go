package fn_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestFunctionBinaryIsLean keeps cluster and CLI libraries out of gate-fn:
// it runs inside every `kustomize build`, often as a container image.
func TestFunctionBinaryIsLean(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/gate-fn")
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/gate-fn: %v", err)
	}
	forbidden := []string{"k8s.io/cli-runtime", "k8s.io/client-go", "github.com/spf13/cobra", "github.com/kubectl-gate/kubectl-gate/plugin"}
	for _, dep := range strings.Split(string(out), "\n") {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("gate-fn imports %s", dep)
			}
		}
	}
}
