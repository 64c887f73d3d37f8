package schema

import (
	"math"
	"regexp"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	openapivalidate "k8s.io/kube-openapi/pkg/validation/validate"
)

// validateOpenAPI is validation.ValidateCustomResource(nil, obj, v), the
// API server's OpenAPI check of a create. kube-openapi walks the whole
// object with its validator machinery (a Result per validator per field,
// paths, reflection) to report errors that the objects of a real render
// almost never have; so a read-only, allocation-free walk along the schema
// (proofNode) first tries to prove that it would report nothing, and only
// when it cannot is the validator called, whose answer is then returned
// unchanged.
func validateOpenAPI(v validation.SchemaCreateValidator, obj map[string]any) field.ErrorList {
	if ov, ok := v.(*openAPIValidator); ok && ov != nil && ov.proof.gap(obj) == proven {
		return nil
	}
	return validation.ValidateCustomResource(nil, obj, v)
}

// proofGap says why the proof could not show that kube-openapi's
// SchemaValidator reports nothing (proven: it showed it). The gaps of
// kind "feature" are schema features the proof does not model; the others
// are violations the validator reports (or may report).
type proofGap uint8

const (
	proven         proofGap = iota
	gapFeature              // a schema feature outside the model (see compile)
	gapType                 // the value's type is not accepted (or not modelled)
	gapEnum                 // not a string of the enum, or not a string
	gapBounds               // length, items, properties, minimum or maximum
	gapRequired             // a required property is missing
	gapUnknown              // a property additionalProperties: false forbids
	gapPattern              // a string the pattern does not match
	gapFormat               // a string the format registry refuses
	gapFloat                // a float where the proof stops (NaN, ±Inf, float format)
	gapNumberRange          // a number outside int32, or a bound not modelled
	gapCount                // the number of gaps
)

// gapNames names each proofGap (tests report them).
var gapNames = [gapCount]string{"proven", "schema feature", "type", "enum", "bounds", "required", "unknown property", "pattern", "format", "float", "number range"}

// Kinds of JSON value, as bits of proofNode.accept.
const (
	kString = 1 << iota
	kInt
	kFloat
	kBool
	kMap
	kSlice
	kNull
)

// proofNode is one node of the schema an openAPIValidator validates with,
// compiled to what kube-openapi's SchemaValidator checks there: which kinds
// of value its type validator accepts, the enum, string, number, array and
// object constraints, and the child nodes it descends into. A node is
// compiled when a value first reaches it (children stay uncompiled until
// then): a render touches a small part of the built-in schemas.
//
// What the SchemaValidator does with a value v at a node s, by validator,
// for the values of the package's JSON data model (map[string]any, []any,
// string, int64, float64, bool, nil), as the proof models it:
//
//   - v nil: only the type validator (an error unless s has no type, its
//     type lists "null", or s is nullable) and the enum (an error whenever
//     s has one: nil converts to no enum value's type) run.
//
//   - type: when s has a type or a format. A string passes when the type
//     lists "string", or when s has a format and the type lists neither
//     "number" nor "integer"; an int64 when it lists "integer" or
//     "number"; a float64 when it lists "number" (an integral float in an
//     "integer" field also passes upstream: not modelled); a bool, map or
//     slice when it lists "boolean", "object" or "array".
//
//   - enum: the value must convert to the type of some enum value and then
//     equal it. Modelled for strings against enum values that are strings
//     (plain equality); any other value at a node with an enum is a gap.
//
//   - string (strings only): maxLength and minLength count runes (an
//     invalid byte is one rune); the pattern is Go's regexp, compiled from
//     the same text and matched the same way.
//
//   - format (strings only): when the validator's registry knows the
//     format name, the registry's own check decides; it is called here.
//
//   - number (int64 and float64 at any node): the value must fit the
//     single type's format (an int64 outside int32 at an "integer",
//     "int32" node fails; a float at a "number", "float" node is a gap),
//     and lie within minimum and maximum, compared as int64 with the
//     bound converted to int64 (truncated) for an int64 (modelled for
//     bounds within ±2^62), as float64 for a float. A bound that does not
//     itself fit the type and format is always an error upstream: a gap.
//
//   - array (slices): minItems, maxItems, and every element under items.
//
//   - object (maps): minProperties, maxProperties, every required name
//     present, each property under its schema, any other key under
//     additionalProperties' schema, or refused by additionalProperties:
//     false.
//
//   - allOf: every schema of it validates v without error; anyOf: one
//     at least does (upstream then drops the errors of those tried before
//     it). Each is a node of its own here, proven or not like any other.
//
// Every other schema feature (oneOf, not, dependencies,
// patternProperties, multipleOf, uniqueItems, tuple items,
// additionalItems, $ref, a type name outside JSON's, a pattern that does
// not compile) makes the node a gap for every value: the validator is
// called. Extensions (x-kubernetes-*) play no part in kube-openapi's
// validation; a node whose type lists "integer" and "string" (a custom
// resource's int-or-string) is modelled by the rules above.
type proofNode struct {
	ready atomic.Bool
	mu    sync.Mutex
	// Where the node's schema is, until it is compiled: a schema, or the
	// property name of a Properties map.
	src    *spec.Schema
	parent map[string]spec.Schema
	name   string
	regs   strfmt.Registry

	opaque   proofGap // gapFeature: a feature outside the model; else proven
	feature  string   // which feature, for tests and reports
	allOf    []*proofNode
	anyOf    []*proofNode
	accept   uint8 // the kinds of value the type validator accepts
	hasEnum  bool
	enum     []string // the enum's string values
	minLen   int64    // -1: none
	maxLen   int64    // -1: none
	pattern  *regexp.Regexp
	format   string          // a format the registry knows, checked on strings
	formats  strfmt.Registry // set with format
	inInt32  bool            // an "integer", "int32" node: int64 values within int32
	float32F bool            // a "number", "float" node: floats are a gap
	min, max bound
	minItems int64 // -1: none
	maxItems int64 // -1: none
	items    *proofNode
	minProps int64 // -1: none
	maxProps int64 // -1: none
	required []string
	props    map[string]*proofNode
	closed   bool // additionalProperties: false
	extra    *proofNode
}

// bound is a minimum or maximum of a node.
type bound struct {
	set       bool
	exclusive bool
	f         float64 // compared with float64 values
	i         int64   // int64(f), compared with int64 values when intOK
	intOK     bool    // f within ±2^62: int64(f) is f truncated (Go's conversion)
	invalid   bool    // f does not fit the node's type and format: always an error
}

func newProofRoot(s *spec.Schema, formats strfmt.Registry) *proofNode {
	return &proofNode{src: s, regs: formats}
}

// load compiles the node on first use.
func (n *proofNode) load() {
	if n.ready.Load() {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ready.Load() {
		return
	}
	s := n.src
	if s == nil {
		p := n.parent[n.name]
		s = &p
	}
	n.compile(s)
	n.src, n.parent = nil, nil
	n.ready.Store(true)
}

// unmodelled names the first schema feature of s outside the proof's
// model, or is "".
func unmodelled(s *spec.Schema) string {
	switch {
	case s.Ref.String() != "":
		return "$ref"
	case len(s.OneOf) > 0:
		return "oneOf"
	case s.Not != nil:
		return "not"
	case len(s.Dependencies) > 0:
		return "dependencies"
	case len(s.PatternProperties) > 0:
		return "patternProperties"
	case s.MultipleOf != nil:
		return "multipleOf"
	case s.UniqueItems:
		return "uniqueItems"
	case s.AdditionalItems != nil:
		return "additionalItems"
	case s.Items != nil && len(s.Items.Schemas) > 0:
		return "tuple items"
	}
	return ""
}

// child is an uncompiled node for a schema.
func (n *proofNode) child(s *spec.Schema) *proofNode {
	if s == nil {
		return nil
	}
	return &proofNode{src: s, regs: n.regs}
}

func (n *proofNode) compile(s *spec.Schema) {
	n.minLen, n.maxLen, n.minItems, n.maxItems, n.minProps, n.maxProps = -1, -1, -1, -1, -1, -1
	if n.feature = unmodelled(s); n.feature != "" {
		n.opaque = gapFeature
		return
	}
	for i := range s.AllOf {
		n.allOf = append(n.allOf, n.child(&s.AllOf[i]))
	}
	for i := range s.AnyOf {
		n.anyOf = append(n.anyOf, n.child(&s.AnyOf[i]))
	}
	var types uint8
	for _, t := range s.Type {
		switch t {
		case "string":
			types |= kString
		case "integer":
			types |= kInt
		case "number":
			types |= kFloat
		case "boolean":
			types |= kBool
		case "object":
			types |= kMap
		case "array":
			types |= kSlice
		case "null":
			types |= kNull
		default:
			n.opaque, n.feature = gapFeature, "type "+t
			return
		}
	}
	n.hasEnum = len(s.Enum) > 0
	for _, e := range s.Enum {
		if str, ok := e.(string); ok {
			n.enum = append(n.enum, str)
		}
	}
	// The type validator: no type and no format, it does not run.
	if len(s.Type) == 0 && s.Format == "" {
		n.accept = kString | kInt | kFloat | kBool | kMap | kSlice
	} else {
		if types&kString != 0 || (s.Format != "" && types&(kInt|kFloat) == 0) {
			n.accept |= kString
		}
		if types&(kInt|kFloat) != 0 { // kFloat is the type "number"
			n.accept |= kInt
		}
		if types&kFloat != 0 {
			n.accept |= kFloat
		}
		n.accept |= types & (kBool | kMap | kSlice)
	}
	if !n.hasEnum && (len(s.Type) == 0 || types&kNull != 0 || s.Nullable) {
		n.accept |= kNull
	}

	if s.MinLength != nil {
		n.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		n.maxLen = *s.MaxLength
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			n.opaque, n.feature = gapFeature, "pattern that does not compile" // every string fails upstream
			return
		}
		n.pattern = re
	}
	if s.Format != "" && n.regs != nil && n.regs.ContainsName(s.Format) {
		n.format, n.formats = s.Format, n.regs
	}

	// The number validator's type and format: set only for a single
	// "integer" or "number" type, and then only formats of that type.
	numType, numFormat := "", ""
	if len(s.Type) == 1 {
		switch s.Type[0] {
		case "integer":
			numType = "integer"
			if s.Format == "int32" || s.Format == "int64" {
				numFormat = s.Format
			}
		case "number":
			numType = "number"
			if s.Format == "float" || s.Format == "double" {
				numFormat = s.Format
			}
		}
	}
	n.inInt32 = numType == "integer" && numFormat == "int32"
	n.float32F = numType == "number" && numFormat == "float"
	n.min = newBound(s.Minimum, s.ExclusiveMinimum, numType, numFormat)
	n.max = newBound(s.Maximum, s.ExclusiveMaximum, numType, numFormat)

	if s.MinItems != nil {
		n.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		n.maxItems = *s.MaxItems
	}
	if s.Items != nil {
		n.items = n.child(s.Items.Schema)
	}

	if s.MinProperties != nil {
		n.minProps = *s.MinProperties
	}
	if s.MaxProperties != nil {
		n.maxProps = *s.MaxProperties
	}
	n.required = s.Required
	if len(s.Properties) > 0 {
		n.props = make(map[string]*proofNode, len(s.Properties))
		for name := range s.Properties {
			n.props[name] = &proofNode{parent: s.Properties, name: name, regs: n.regs}
		}
	}
	if ap := s.AdditionalProperties; ap != nil {
		if !ap.Allows {
			n.closed = true
		} else {
			n.extra = n.child(ap.Schema)
		}
	}
}

// newBound compiles a minimum or maximum. Upstream first checks that the
// bound itself fits the node's numeric type and format (an "integer"
// bound of 1.5, or beyond int64, or beyond int32 at an "int32" node), and
// reports an error for every number when it does not; it asks
// kube-openapi's own check here, once.
func newBound(v *float64, exclusive bool, numType, numFormat string) bound {
	if v == nil {
		return bound{}
	}
	b := bound{set: true, exclusive: exclusive, f: *v}
	b.invalid = openapivalidate.IsValueValidAgainstRange(*v, numType, numFormat, "", "") != nil
	const limit = 1 << 62
	if *v >= -limit && *v <= limit {
		b.i, b.intOK = int64(*v), true
	}
	return b
}

// gap walks v along the node: proven when kube-openapi's SchemaValidator
// reports nothing for it, else the first reason the proof stops.
func (n *proofNode) gap(v any) proofGap {
	n.load()
	if n.opaque != proven {
		return n.opaque
	}
	if v != nil && (n.allOf != nil || n.anyOf != nil) { // upstream checks only type and enum on null
		if g := n.combinedGap(v); g != proven {
			return g
		}
	}
	switch v := v.(type) {
	case nil:
		if n.accept&kNull == 0 {
			return gapType
		}
		return proven
	case string:
		if n.accept&kString == 0 {
			return gapType
		}
		return n.stringGap(v)
	case int64:
		if n.accept&kInt == 0 {
			return gapType
		}
		if n.hasEnum {
			return gapEnum
		}
		return n.intGap(v)
	case float64:
		if n.accept&kFloat == 0 {
			return gapType
		}
		if n.hasEnum {
			return gapEnum
		}
		return n.floatGap(v)
	case bool:
		if n.accept&kBool == 0 {
			return gapType
		}
		if n.hasEnum {
			return gapEnum
		}
		return proven
	case map[string]any:
		if n.accept&kMap == 0 {
			return gapType
		}
		if n.hasEnum {
			return gapEnum
		}
		return n.objectGap(v)
	case []any:
		if n.accept&kSlice == 0 {
			return gapType
		}
		if n.hasEnum {
			return gapEnum
		}
		return n.arrayGap(v)
	}
	return gapType
}

// combinedGap: every allOf schema, and one anyOf schema at least, proves
// v. (kube-openapi reports nothing for allOf when each schema validates v
// without error, and nothing for anyOf once one does: the errors of the
// schemas tried before it are dropped.)
func (n *proofNode) combinedGap(v any) proofGap {
	for _, c := range n.allOf {
		if g := c.gap(v); g != proven {
			return g
		}
	}
	if len(n.anyOf) == 0 {
		return proven
	}
	first := proven
	for _, c := range n.anyOf {
		g := c.gap(v)
		if g == proven {
			return proven
		}
		if first == proven {
			first = g
		}
	}
	return first
}

func (n *proofNode) stringGap(v string) proofGap {
	if n.hasEnum {
		found := false
		for _, e := range n.enum {
			if e == v {
				found = true
				break
			}
		}
		if !found {
			return gapEnum
		}
	}
	if n.minLen >= 0 || n.maxLen >= 0 {
		runes := int64(utf8.RuneCountInString(v))
		if n.minLen >= 0 && runes < n.minLen || n.maxLen >= 0 && runes > n.maxLen {
			return gapBounds
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(v) {
		return gapPattern
	}
	if n.format != "" && !n.formats.Validates(n.format, v) {
		return gapFormat
	}
	return proven
}

func (n *proofNode) intGap(v int64) proofGap {
	if n.inInt32 && (v < math.MinInt32 || v > math.MaxInt32) {
		return gapNumberRange
	}
	if n.min.set {
		if n.min.invalid || !n.min.intOK {
			return gapNumberRange
		}
		if v < n.min.i || n.min.exclusive && v == n.min.i {
			return gapBounds
		}
	}
	if n.max.set {
		if n.max.invalid || !n.max.intOK {
			return gapNumberRange
		}
		if v > n.max.i || n.max.exclusive && v == n.max.i {
			return gapBounds
		}
	}
	return proven
}

func (n *proofNode) floatGap(v float64) proofGap {
	if math.IsNaN(v) || math.IsInf(v, 0) || n.float32F {
		return gapFloat
	}
	if n.min.set {
		if n.min.invalid {
			return gapNumberRange
		}
		if v < n.min.f || n.min.exclusive && v == n.min.f {
			return gapBounds
		}
	}
	if n.max.set {
		if n.max.invalid {
			return gapNumberRange
		}
		if v > n.max.f || n.max.exclusive && v == n.max.f {
			return gapBounds
		}
	}
	return proven
}

func (n *proofNode) arrayGap(v []any) proofGap {
	size := int64(len(v))
	if n.minItems >= 0 && size < n.minItems || n.maxItems >= 0 && size > n.maxItems {
		return gapBounds
	}
	if n.items == nil {
		return proven
	}
	for _, e := range v {
		if g := n.items.gap(e); g != proven {
			return g
		}
	}
	return proven
}

func (n *proofNode) objectGap(v map[string]any) proofGap {
	size := int64(len(v))
	if n.minProps >= 0 && size < n.minProps || n.maxProps >= 0 && size > n.maxProps {
		return gapBounds
	}
	for _, r := range n.required {
		if _, ok := v[r]; !ok {
			return gapRequired
		}
	}
	for k, e := range v {
		if c, ok := n.props[k]; ok {
			if g := c.gap(e); g != proven {
				return g
			}
			continue
		}
		if n.closed {
			return gapUnknown
		}
		if n.extra != nil {
			if g := n.extra.gap(e); g != proven {
				return g
			}
		}
	}
	return proven
}
