package apivalidation

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	crdinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CustomResourceDefinitions are served by the API server's apiextensions
// part, with its own scheme (not legacyscheme): it is installed here into
// a scheme of its own, as k8s.io/apiextensions-apiserver's server does.
var (
	crdScheme = runtime.NewScheme()
	crdCodecs = serializer.NewCodecFactory(crdScheme)
)

func init() { crdinstall.Install(crdScheme) }

// validateCRD is the apiextensions server's
// validation.ValidateCustomResourceDefinition, set by package webhooks
// (RegisterCRD): that package links k8s.io/apiserver's webhook client
// helpers and through them client-go's REST client, which the rules must
// not reach (internal/depcheck); the binaries import it for its effect.
var validateCRD func(context.Context, *apiextensions.CustomResourceDefinition) field.ErrorList

// RegisterCRD sets the CustomResourceDefinition validation; it is called
// from an init function.
func RegisterCRD(fn func(context.Context, *apiextensions.CustomResourceDefinition) field.ErrorList) {
	validateCRD = fn
}

// IsCRD reports whether apiVersion and kind name a CustomResourceDefinition
// the API server serves (apiextensions.k8s.io/v1; v1beta1 was removed in
// Kubernetes 1.22).
func IsCRD(apiVersion, kind string) bool {
	return apiVersion == "apiextensions.k8s.io/v1" && kind == "CustomResourceDefinition"
}

// ValidateCRD runs the API server's create path on a
// CustomResourceDefinition: decoding with the apiextensions scheme, its
// defaulting, conversion to the internal version, the registry strategy's
// PrepareForCreate, then validation.ValidateCustomResourceDefinition, which
// compiles every x-kubernetes-validations rule and checks it against the
// CEL cost budget, besides structural schema, defaults, names and
// versions. ValidateCRD changes obj. ok is false when obj is not a served
// CRD, or in a program that does not import package webhooks (RegisterCRD);
// a nil *Error means the API server would store it.
func ValidateCRD(obj map[string]any) (verdict *Error, ok bool) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if !IsCRD(apiVersion, kind) || validateCRD == nil {
		return nil, false
	}
	prepare(obj)
	versioned, err := decode(obj, apiextensionsv1.SchemeGroupVersion.WithKind(kind), crdScheme, crdCodecs)
	if err != nil {
		return &Error{Decode: err.Error()}, true
	}
	crdScheme.Default(versioned)
	crd := &apiextensions.CustomResourceDefinition{}
	if err := crdScheme.Convert(versioned, crd, nil); err != nil {
		return &Error{Decode: fmt.Sprintf("converting %s %s to the internal version: %v", apiVersion, kind, err)}, true
	}
	prepareCRD(crd)
	if errs := validateCRD(context.Background(), crd); len(errs) > 0 {
		return &Error{Fields: errs}, true
	}
	return nil, true
}

// prepareCRD is the CustomResourceDefinition strategy's PrepareForCreate
// (k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition):
// an empty status that records the storage version as stored, generation
// 1. Its dropDisabledFields drops nothing at this release (the fields it
// guards are behind gates on by default).
func prepareCRD(crd *apiextensions.CustomResourceDefinition) {
	crd.Status = apiextensions.CustomResourceDefinitionStatus{}
	crd.Generation = 1
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			break
		}
	}
}
