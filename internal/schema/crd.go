package schema

import (
	"encoding/json"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// crdKind is one custom kind: its scope and each version's schema.
type crdKind struct {
	source     string // "render", a --crd file, or "built-in (project)"
	namespaced bool
	versions   map[string]*crdVersion
}

type crdVersion struct {
	served             bool
	deprecated         bool
	deprecationWarning string
	preserveUnknown    bool
	statusSubresource  bool
	structural         *structuralschema.Structural
	props              *apiextensions.JSONSchemaProps
}

// parseCRD reads a CustomResourceDefinition in its JSON data model and
// builds each version's structural schema the way the API server does
// (v1 → internal → structural, defaults pruned).
func parseCRD(obj map[string]any, source string) (group, kind string, k *crdKind, err error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return "", "", nil, fmt.Errorf("encoding CRD: %w", err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(raw, &crd); err != nil {
		return "", "", nil, fmt.Errorf("decoding CRD %q: %w", crd.Name, err)
	}
	k = &crdKind{
		source:     source,
		namespaced: crd.Spec.Scope != apiextensionsv1.ClusterScoped,
		versions:   map[string]*crdVersion{},
	}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		cv := &crdVersion{served: v.Served, deprecated: v.Deprecated, preserveUnknown: crd.Spec.PreserveUnknownFields}
		cv.statusSubresource = v.Subresources != nil && v.Subresources.Status != nil
		if v.DeprecationWarning != nil {
			cv.deprecationWarning = *v.DeprecationWarning
		}
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			internal := &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				return "", "", nil, fmt.Errorf("converting CRD %q version %s: %w", crd.Name, v.Name, err)
			}
			s, err := structuralschema.NewStructural(internal)
			if err != nil {
				return "", "", nil, fmt.Errorf("CRD %q version %s: schema is not structural: %w", crd.Name, v.Name, err)
			}
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return "", "", nil, fmt.Errorf("CRD %q version %s: pruning defaults: %w", crd.Name, v.Name, err)
			}
			cv.structural, cv.props = s, internal
		}
		k.versions[v.Name] = cv
	}
	return crd.Spec.Group, crd.Spec.Names.Kind, k, nil
}

// openAPIValidator returns the schema validator the API server uses for a
// custom resource version (formats it does not support are stripped).
func (cv *crdVersion) openAPIValidator() (validation.SchemaCreateValidator, error) {
	if cv.props == nil {
		return nil, nil
	}
	_, sp, err := validation.NewSchemaValidator(cv.props)
	if err != nil {
		return nil, fmt.Errorf("building schema validator: %w", err)
	}
	return newOpenAPIValidator(sp, strfmt.Default), nil
}

// builtinValidator returns the schema validator for a built-in kind.
func builtinValidator(s *structuralschema.Structural) validation.SchemaCreateValidator {
	var sp *spec.Schema = s.ToKubeOpenAPI()
	return newOpenAPIValidator(sp, builtinFormats)
}
