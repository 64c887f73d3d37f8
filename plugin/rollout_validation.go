package plugin

import (
	"github.com/kubectl-gate/kubectl-gate/internal/rolloutvalidation"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/rollouts"
)

// The plugin links the Argo Rollouts controller's validation, so
// rollout-invalid-spec runs here; the KRM function does not (see
// internal/rolloutvalidation).
func init() {
	rollouts.UseControllerValidation(rolloutvalidation.Validate)
}
