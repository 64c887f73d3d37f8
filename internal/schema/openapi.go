package schema

import (
	"reflect"
	"sort"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	openapivalidate "k8s.io/kube-openapi/pkg/validation/validate"
)

// openAPIValidator is the API server's OpenAPI check of a create
// (validation.NewSchemaValidatorFromOpenAPI's Validate: kube-openapi's
// SchemaValidator over the whole schema, strfmt.Default formats), with one
// change in cost, not in outcome: each field's and item's validator is
// built over its schema with only the properties the value has.
//
// kube-openapi's object validator copies every property schema of a level
// (528 bytes each, on the heap) for every object, whether the object has
// the field or not; a Pod spec has ~40 properties and uses a handful. That
// copying was a third of the schema pass's allocations. The properties an
// object lacks play no part in its validation: unknown-name checks look up
// the value's own keys, required fields come from the schema's Required
// list, and only present fields are descended into.
type openAPIValidator struct {
	schema *spec.Schema
	opt    openapivalidate.Option
	// trimmed memoizes the trimmed schemas: a trimmedKey names a node of
	// this schema (its Properties map, made once per node) and the property
	// names an object had there.
	trimmed sync.Map // trimmedKey → *spec.Schema
}

type trimmedKey struct {
	props uintptr
	keys  string
}

func newOpenAPIValidator(s *spec.Schema) *openAPIValidator {
	v := &openAPIValidator{schema: s}
	v.opt = v.presentOnly
	return v
}

var _ validation.SchemaCreateValidator = (*openAPIValidator)(nil)

func (v *openAPIValidator) Validate(value any, _ ...validation.ValidationOption) *openapivalidate.Result {
	return openapivalidate.NewSchemaValidator(v.schema, nil, "", strfmt.Default, v.opt).Validate(value)
}

// presentOnly is the kube-openapi validate.Option that makes child
// validators trimmed ones; every child passes it on.
func (v *openAPIValidator) presentOnly(o *openapivalidate.SchemaValidatorOptions) {
	o.NewValidatorForField = func(_ string, s *spec.Schema, root any, path string, f strfmt.Registry, _ ...openapivalidate.Option) openapivalidate.ValueValidator {
		return &trimmedValidator{v: v, schema: s, root: root, path: path, formats: f}
	}
	o.NewValidatorForIndex = func(_ int, s *spec.Schema, root any, path string, f strfmt.Registry, _ ...openapivalidate.Option) openapivalidate.ValueValidator {
		return &trimmedValidator{v: v, schema: s, root: root, path: path, formats: f}
	}
}

// trimmedValidator builds kube-openapi's SchemaValidator when it sees the
// value, over the schema trimmed to the value's keys.
type trimmedValidator struct {
	v       *openAPIValidator
	schema  *spec.Schema
	root    any
	path    string
	formats strfmt.Registry
}

func (t *trimmedValidator) SetPath(path string) { t.path = path }

// Applies is SchemaValidator's: it applies to schemas.
func (t *trimmedValidator) Applies(source any, _ reflect.Kind) bool {
	_, ok := source.(*spec.Schema)
	return ok
}

func (t *trimmedValidator) Validate(data any) *openapivalidate.Result {
	return openapivalidate.NewSchemaValidator(t.v.trim(t.schema, data), t.root, t.path, t.formats, t.v.opt).Validate(data)
}

// trim returns s, or a shallow copy of it whose Properties are only those
// the object data has, when that drops some.
func (v *openAPIValidator) trim(s *spec.Schema, data any) *spec.Schema {
	m, ok := data.(map[string]any)
	if s == nil || !ok || len(s.Properties) <= len(m) {
		return s
	}
	var buf [16]string
	present := buf[:0]
	for k := range m {
		if _, ok := s.Properties[k]; ok {
			present = append(present, k)
		}
	}
	if len(present) == len(s.Properties) {
		return s
	}
	sort.Strings(present)
	key := trimmedKey{props: reflect.ValueOf(s.Properties).Pointer(), keys: strings.Join(present, "\x00")}
	if t, ok := v.trimmed.Load(key); ok {
		return t.(*spec.Schema)
	}
	props := make(map[string]spec.Schema, len(present))
	for _, k := range present {
		props[k] = s.Properties[k]
	}
	out := *s
	out.Properties = props
	v.trimmed.Store(key, &out)
	return &out
}
