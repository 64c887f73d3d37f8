package webhooks

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	"k8s.io/kubernetes/pkg/apis/admissionregistration/validation"

	"github.com/kubectl-gate/kubectl-gate/internal/apivalidation"
)

// ValidatingAdmissionPolicies and their bindings, from the same validation
// package, as their registry strategies validate them on create
// (k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy
// and …binding): it compiles every expression (variables, matchConditions,
// validations, messageExpressions, auditAnnotations) against the CEL
// environment of this release and checks its cost, so an expression that
// does not compile is refused whatever the failurePolicy. The strategies'
// authorization of paramKind and paramRef needs the requesting user and is
// left out.
func init() {
	apivalidation.Register("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", func(o runtime.Object) field.ErrorList {
		p := o.(*admissionregistration.ValidatingAdmissionPolicy)
		p.Status, p.Generation = admissionregistration.ValidatingAdmissionPolicyStatus{}, 1 // PrepareForCreate
		return append(validation.ValidateValidatingAdmissionPolicy(p), staticSuffix(p.Name)...)
	})
	apivalidation.Register("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", func(o runtime.Object) field.ErrorList {
		b := o.(*admissionregistration.ValidatingAdmissionPolicyBinding)
		return append(validation.ValidateValidatingAdmissionPolicyBinding(b), staticSuffix(b.Name)...)
	})
}
