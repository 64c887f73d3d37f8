package webhooks

import (
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"

	"github.com/kubectl-gate/kubectl-gate/internal/apivalidation"
)

// CustomResourceDefinitions get the apiextensions server's own validation
// (its rules compiled, their CEL cost checked): it links k8s.io/apiserver's
// webhook client helpers, hence here and not in apivalidation.
func init() {
	apivalidation.RegisterCRD(validation.ValidateCustomResourceDefinition)
}
