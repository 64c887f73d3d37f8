package selftest_test

import (
	"github.com/kubectl-gate/kubectl-gate/internal/rolloutvalidation"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/rollouts"
)

// The selftest runs here as in the plugin, which links the Argo Rollouts
// controller's validation (rollout-invalid-spec).
func init() { rollouts.UseControllerValidation(rolloutvalidation.Validate) }
