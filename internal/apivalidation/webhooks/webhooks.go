// Package webhooks adds ValidatingWebhookConfiguration and
// MutatingWebhookConfiguration, and ValidatingAdmissionPolicy and its
// binding (policies.go), to the kinds package apivalidation validates, with the API server's own validation of them
// (k8s.io/kubernetes/pkg/apis/admissionregistration/validation, as the
// registry strategies of kube-apiserver v1.37.2 run it on create).
//
// It is its own package, imported for its effect by the binaries
// (cmd/kubectl-gate, cmd/gate-fn), because that validation package links
// the API server's admission library and, through it, client-go's REST
// client: the binaries hold those already (the ValidatingAdmissionPolicy
// checks run that library), but the rules must not reach a client
// (internal/depcheck), so apivalidation cannot import it itself. A binary
// without this import validates webhook configurations by their schema
// only; plugin's and fn's tests check that both binaries reject an invalid
// one.
package webhooks

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	"k8s.io/kubernetes/pkg/apis/admissionregistration/validation"

	"github.com/kubectl-gate/kubectl-gate/internal/apivalidation"
)

func init() {
	apivalidation.Register("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", func(o runtime.Object) field.ErrorList {
		c := o.(*admissionregistration.ValidatingWebhookConfiguration)
		return append(validation.ValidateValidatingWebhookConfiguration(c), staticSuffix(c.Name)...)
	})
	apivalidation.Register("admissionregistration.k8s.io", "MutatingWebhookConfiguration", func(o runtime.Object) field.ErrorList {
		c := o.(*admissionregistration.MutatingWebhookConfiguration)
		return append(validation.ValidateMutatingWebhookConfiguration(c), staticSuffix(c.Name)...)
	})
}

// staticSuffix is the strategies' name check for the names manifest-based
// admission configuration reserves, where that feature is on.
func staticSuffix(name string) field.ErrorList {
	if !utilfeature.DefaultFeatureGate.Enabled(features.ManifestBasedAdmissionControlConfig) {
		return nil
	}
	return validation.ValidateStaticSuffix(name, field.NewPath("metadata", "name"))
}
