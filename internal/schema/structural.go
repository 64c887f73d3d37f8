package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// builtinSchemas turns the OpenAPI v3 component schemas of the built-in API
// into structural schemas, the form the API server validates custom
// resources with, one definition at a time and memoized.
//
// The published documents need three adjustments, each the API server's own
// behaviour for the Go types behind them:
//   - $ref (bare or wrapped in a one-element allOf) is inlined;
//   - IntOrString and Quantity accept a number or a string
//     (x-kubernetes-int-or-string), as their JSON unmarshalers do;
//   - a definition that refers to itself (JSONSchemaProps inside a CRD) is
//     cut at the second visit with x-kubernetes-preserve-unknown-fields, so
//     fields below that depth are not checked for unknown names.
type builtinSchemas struct {
	raw map[string]json.RawMessage

	mu    sync.Mutex
	cache map[string]*structuralschema.Structural
}

// intOrString lists the definitions whose JSON form is a number or a string.
var intOrString = map[string]bool{
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": true,
	"io.k8s.apimachinery.pkg.api.resource.Quantity":   true,
}

// nullable lists the definitions whose Go unmarshalers accept null.
var nullable = map[string]bool{
	"io.k8s.apimachinery.pkg.runtime.RawExtension":                  true,
	"io.k8s.apimachinery.pkg.apis.meta.v1.Time":                     true,
	"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime":                true,
	"io.k8s.apimachinery.pkg.apis.meta.v1.Duration":                 true,
	"io.k8s.apimachinery.pkg.api.resource.Quantity":                 true,
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString":               true,
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": true,
}

// definition returns the structural schema of one component by name.
func (b *builtinSchemas) definition(name string) (*structuralschema.Structural, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.cache[name]; ok {
		return s, nil
	}
	s, err := b.resolve(name, map[string]bool{})
	if err != nil {
		return nil, err
	}
	b.cache[name] = s
	return s, nil
}

func (b *builtinSchemas) resolve(name string, visiting map[string]bool) (*structuralschema.Structural, error) {
	if s, ok := b.cache[name]; ok {
		return s, nil
	}
	if visiting[name] {
		return &structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}, nil
	}
	raw, ok := b.raw[name]
	if !ok {
		return nil, fmt.Errorf("resolving schema %q: no such definition", name)
	}
	if intOrString[name] {
		return &structuralschema.Structural{
			Generic:    structuralschema.Generic{Nullable: nullable[name]},
			Extensions: structuralschema.Extensions{XIntOrString: true},
		}, nil
	}
	var sp spec.Schema
	if err := json.Unmarshal(raw, &sp); err != nil {
		return nil, fmt.Errorf("decoding schema %q: %w", name, err)
	}
	visiting[name] = true
	defer delete(visiting, name)
	s, err := b.convert(&sp, visiting)
	if err != nil {
		return nil, fmt.Errorf("converting schema %q: %w", name, err)
	}
	if nullable[name] {
		s.Nullable = true
	}
	b.cache[name] = s
	return s, nil
}

func refName(s *spec.Schema) string {
	ref := s.Ref.String()
	if ref == "" && len(s.AllOf) == 1 {
		ref = s.AllOf[0].Ref.String()
	}
	if ref == "" {
		return ""
	}
	return ref[strings.LastIndex(ref, "/")+1:]
}

func (b *builtinSchemas) convert(sp *spec.Schema, visiting map[string]bool) (*structuralschema.Structural, error) {
	if name := refName(sp); name != "" {
		target, err := b.resolve(name, visiting)
		if err != nil {
			return nil, err
		}
		out := *target // shallow: siblings of a $ref only add a default or nullable
		if !zeroValue(sp.Default) {
			out.Default = structuralschema.JSON{Object: sp.Default}
		}
		out.Nullable = out.Nullable || sp.Nullable
		return &out, nil
	}
	out := &structuralschema.Structural{
		Generic: structuralschema.Generic{Nullable: sp.Nullable},
	}
	if len(sp.Type) == 1 {
		out.Type = sp.Type[0]
	}
	if !zeroValue(sp.Default) {
		out.Default = structuralschema.JSON{Object: sp.Default}
	}
	convertExtensions(sp, out)
	if sp.Format == "int-or-string" {
		out.XIntOrString, out.Type = true, ""
	}
	out.ValueValidation = valueValidation(sp)
	if sp.Items != nil && sp.Items.Schema != nil {
		items, err := b.convert(sp.Items.Schema, visiting)
		if err != nil {
			return nil, err
		}
		out.Items = items
	}
	if len(sp.Properties) > 0 {
		out.Properties = make(map[string]structuralschema.Structural, len(sp.Properties))
		for k := range sp.Properties {
			p := sp.Properties[k]
			ps, err := b.convert(&p, visiting)
			if err != nil {
				return nil, err
			}
			out.Properties[k] = *ps
		}
	}
	if ap := sp.AdditionalProperties; ap != nil {
		if ap.Schema != nil {
			as, err := b.convert(ap.Schema, visiting)
			if err != nil {
				return nil, err
			}
			out.AdditionalProperties = &structuralschema.StructuralOrBool{Structural: as, Bool: true}
		} else {
			out.AdditionalProperties = &structuralschema.StructuralOrBool{Bool: ap.Allows}
		}
	}
	if out.Type == "object" && out.Properties == nil && out.AdditionalProperties == nil && !out.XIntOrString {
		// RawExtension, FieldsV1 and the like: free-form objects.
		out.XPreserveUnknownFields = true
	}
	return out, nil
}

func convertExtensions(sp *spec.Schema, out *structuralschema.Structural) {
	ext := sp.Extensions
	if v, ok := ext.GetBool("x-kubernetes-preserve-unknown-fields"); ok {
		out.XPreserveUnknownFields = v
	}
	if v, ok := ext.GetBool("x-kubernetes-embedded-resource"); ok {
		out.XEmbeddedResource = v
	}
	if v, ok := ext.GetBool("x-kubernetes-int-or-string"); ok {
		out.XIntOrString = v
	}
	if v, ok := ext.GetString("x-kubernetes-list-type"); ok {
		out.XListType = &v
	}
	if v, ok := ext.GetString("x-kubernetes-map-type"); ok {
		out.XMapType = &v
	}
	if v, ok := ext.GetStringSlice("x-kubernetes-list-map-keys"); ok {
		out.XListMapKeys = v
	}
	if raw, ok := ext["x-kubernetes-validations"]; ok {
		if b, err := json.Marshal(raw); err == nil {
			var rules apiextensionsv1.ValidationRules
			if json.Unmarshal(b, &rules) == nil {
				out.XValidations = rules
			}
		}
	}
}

func valueValidation(sp *spec.Schema) *structuralschema.ValueValidation {
	vv := structuralschema.ValueValidation{
		Format:           sp.Format,
		Maximum:          sp.Maximum,
		ExclusiveMaximum: sp.ExclusiveMaximum,
		Minimum:          sp.Minimum,
		ExclusiveMinimum: sp.ExclusiveMinimum,
		MaxLength:        sp.MaxLength,
		MinLength:        sp.MinLength,
		Pattern:          sp.Pattern,
		MaxItems:         sp.MaxItems,
		MinItems:         sp.MinItems,
		UniqueItems:      sp.UniqueItems,
		MultipleOf:       sp.MultipleOf,
		MaxProperties:    sp.MaxProperties,
		MinProperties:    sp.MinProperties,
		Required:         sp.Required,
	}
	switch vv.Format {
	case "int32", "int64", "double", "float", "int-or-string":
		vv.Format = "" // numeric widths are enforced by the Go decoder, not by a format
	}
	for _, e := range sp.Enum {
		vv.Enum = append(vv.Enum, structuralschema.JSON{Object: e})
	}
	if reflect.DeepEqual(vv, structuralschema.ValueValidation{}) {
		return nil
	}
	return &vv
}

// zeroValue reports a published default that only states the Go zero value
// of a field without omitempty ("", 0, false, {}, []). The API server's
// decoder fills those too, but its validation then rejects an empty required
// field; applying them as defaults would hide "Required value".
func zeroValue(v any) bool {
	switch d := v.(type) {
	case nil:
		return true
	case string:
		return d == ""
	case bool:
		return !d
	case float64:
		return d == 0
	case int64:
		return d == 0
	case map[string]any:
		return len(d) == 0
	case []any:
		return len(d) == 0
	}
	return false
}
