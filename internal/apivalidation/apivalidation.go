package apivalidation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// The API groups a GitOps repository deploys, installed into the
	// API server's scheme as kube-apiserver installs them.
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
)

// Error is what the API server would answer about one object: either a
// decoding error (Decode, the whole request refused with 400) or the
// validation errors of its kind (422), each with the field path and the API
// server's message.
type Error struct {
	Decode string
	Fields field.ErrorList
}

// Handles reports whether Validate knows the kind at this apiVersion.
func Handles(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	_, ok := validators[schema.GroupKind{Group: gv.Group, Kind: kind}]
	return ok && legacyscheme.Scheme.Recognizes(gv.WithKind(kind))
}

// Validate runs the API server's create path after the schema on one
// object, as kubectl would send it: its namespace already set (or cleared
// for cluster-scoped kinds). Validate changes obj. ok is false when the
// kind is not one it validates; a nil *Error means the API server would
// accept it.
func Validate(obj map[string]any) (verdict *Error, ok bool) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false
	}
	gvk := gv.WithKind(kind)
	validate, ok := validators[gvk.GroupKind()]
	if !ok || !legacyscheme.Scheme.Recognizes(gvk) {
		return nil, false
	}
	prepare(obj)
	objs := objectsOf(legacyscheme.Scheme, gvk)
	var into runtime.Object
	if objs != nil {
		into = objs.versioned.Get().(runtime.Object)
	}
	versioned, err := decodeInto(obj, into, gvk, legacyscheme.Scheme, legacyscheme.Codecs)
	if err != nil {
		return &Error{Decode: err.Error()}, true
	}
	defaultPullPolicies(versioned)
	legacyscheme.Scheme.Default(versioned)
	// The versioned object is this call's own and is dropped after the
	// conversion: converted without the deep copy ConvertToVersion makes
	// first, as the API server's decoding converts its own objects.
	var internal runtime.Object
	if objs != nil {
		internal, err = objs.convert(legacyscheme.Scheme, versioned)
	} else {
		internal, err = legacyscheme.Scheme.UnsafeConvertToVersion(versioned, schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal})
	}
	if err != nil {
		return &Error{Decode: fmt.Sprintf("converting %s %s to the internal version: %v", apiVersion, kind, err)}, true
	}
	if errs := validate(internal); len(errs) > 0 {
		return &Error{Fields: errs}, true
	}
	if objs != nil && versioned == into {
		objs.release(versioned, internal)
	}
	return nil, true
}
