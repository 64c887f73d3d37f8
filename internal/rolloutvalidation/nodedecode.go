package rolloutvalidation

import (
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// decodeNode fills out, a pointer to a zero value, from the parsed node
// with the result decodeJSON's path gives (the node decoded by go-yaml into
// map[string]any, printed as JSON, read back case-sensitively with ints
// preserved), without the two intermediate forms: a plan compiled once per
// Go type walks the node tree and sets the fields directly.
//
// It takes only what it can prove gives that path's result: plain keys,
// no aliases or merge keys, scalars whose YAML resolution is unambiguous
// (quoted or !!str strings in valid UTF-8, decimal ints, plain decimals,
// true/false, null), values of the field's own JSON type. Anything else,
// in a known field or in one the decoder drops (a duplicate key, a type
// mismatch, an int that overflows its field, a timestamp, an anchor
// reference), is errDecline, and the caller takes decodeJSON's own path,
// so every refusal keeps that path's words. A value whose Go type reads
// JSON itself (UnmarshalJSON, UnmarshalText: quantities, IntOrString,
// times) gets the JSON that path would give it, and an error there is a
// decline too.
func decodeNode(n *yaml.Node, out any) error {
	v := reflect.ValueOf(out)
	if n == nil || n.Kind != yaml.MappingNode || v.Kind() != reflect.Pointer || v.IsNil() {
		return errDecline
	}
	return nodePlanOf(v.Type().Elem()).decode(n, v.Elem())
}

var errDecline = errors.New("not decoded from the node: take the JSON path")

// A nodePlan fills a value of one Go type, still zero, from a node.
type nodePlan struct {
	decode func(n *yaml.Node, dv reflect.Value) error
	// readsNull: the type reads a null itself (UnmarshalJSON("null"));
	// for every other type a null leaves the zero value.
	readsNull bool
}

// value decodes n into dv, a null leaving the zero value as JSON does
// (encoding/json literalStore: nil pointers, maps, slices and interfaces,
// untouched primitives and structs).
func (p *nodePlan) value(n *yaml.Node, dv reflect.Value) error {
	if !p.readsNull {
		null, err := isNull(n)
		if err != nil || null {
			return err
		}
	}
	return p.decode(n, dv)
}

var (
	nodePlans    sync.Map // reflect.Type → *nodePlan
	nodePlansMu  sync.Mutex
	nodeBuilding = map[reflect.Type]*nodePlan{}
)

func nodePlanOf(t reflect.Type) *nodePlan {
	if p, ok := nodePlans.Load(t); ok {
		return p.(*nodePlan)
	}
	nodePlansMu.Lock()
	defer nodePlansMu.Unlock()
	p := nodePlanLocked(t)
	for bt, bp := range nodeBuilding {
		nodePlans.Store(bt, bp)
	}
	clear(nodeBuilding)
	return p
}

// nodePlanLocked returns t's plan, compiling it (recursive types reach
// their own plan while it is built: a closure reads a plan's decode only
// when it runs, after the whole tree is published).
func nodePlanLocked(t reflect.Type) *nodePlan {
	if p, ok := nodePlans.Load(t); ok {
		return p.(*nodePlan)
	}
	if p, ok := nodeBuilding[t]; ok {
		return p
	}
	p := &nodePlan{}
	nodeBuilding[t] = p
	p.decode, p.readsNull = compileNode(t)
	return p
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// readsJSON says a type decodes itself: encoding/json hands it the value
// (UnmarshalJSON) or the string (UnmarshalText).
func readsJSON(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(jsonUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

func compileNode(t reflect.Type) (func(*yaml.Node, reflect.Value) error, bool) {
	if readsJSON(t) {
		return viaJSON, true
	}
	switch t.Kind() {
	case reflect.String:
		return func(n *yaml.Node, dv reflect.Value) error {
			s, ok := scalarOf(n)
			if !ok || s.kind != scalarString {
				return viaJSON(n, dv)
			}
			dv.SetString(s.str)
			return nil
		}, false
	case reflect.Bool:
		return func(n *yaml.Node, dv reflect.Value) error {
			s, ok := scalarOf(n)
			if !ok || s.kind != scalarBool {
				return viaJSON(n, dv)
			}
			dv.SetBool(s.b)
			return nil
		}, false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(n *yaml.Node, dv reflect.Value) error {
			s, ok := scalarOf(n)
			if !ok || s.kind != scalarInt || dv.OverflowInt(s.i) {
				return viaJSON(n, dv)
			}
			dv.SetInt(s.i)
			return nil
		}, false
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(n *yaml.Node, dv reflect.Value) error {
			s, ok := scalarOf(n)
			if !ok || s.kind != scalarInt || s.i < 0 || dv.OverflowUint(uint64(s.i)) {
				return viaJSON(n, dv)
			}
			dv.SetUint(uint64(s.i))
			return nil
		}, false
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return viaJSON, false // JSON refuses it: a decline
		}
		return func(n *yaml.Node, dv reflect.Value) error {
			g, printed, err := generic(n)
			if err != nil {
				return err
			}
			if printed {
				// JSON reads a float back as int64 or float64 by its
				// printed form, a time as its string: let it.
				return viaJSON(n, dv)
			}
			if g != nil {
				dv.Set(reflect.ValueOf(g))
			}
			return nil
		}, false
	case reflect.Map:
		return compileNodeMap(t), false
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return viaJSON, false // base64
		}
		return compileNodeSlice(t), false
	case reflect.Pointer:
		elem := nodePlanLocked(t.Elem())
		return func(n *yaml.Node, dv reflect.Value) error {
			nv := reflect.New(t.Elem())
			if err := elem.decode(n, nv.Elem()); err != nil {
				return err
			}
			dv.Set(nv)
			return nil
		}, false
	case reflect.Struct:
		return compileNodeStruct(t), false
	}
	// Floats, arrays, non-string map keys…: what JSON makes of the value.
	return viaJSON, false
}

func compileNodeMap(t reflect.Type) func(*yaml.Node, reflect.Value) error {
	kt := t.Key()
	if kt.Kind() != reflect.String || readsJSON(kt) {
		return viaJSON
	}
	elemT := t.Elem()
	elem := nodePlanLocked(elemT)
	plainKey := kt == reflect.TypeFor[string]()
	return func(n *yaml.Node, dv reflect.Value) error {
		if n.Kind != yaml.MappingNode {
			return errDecline
		}
		if err := checkKeys(n); err != nil {
			return err
		}
		out := reflect.MakeMapWithSize(t, len(n.Content)/2)
		for i := 0; i < len(n.Content); i += 2 {
			ev := reflect.New(elemT).Elem()
			if err := elem.value(n.Content[i+1], ev); err != nil {
				return err
			}
			kv := reflect.ValueOf(n.Content[i].Value)
			if !plainKey {
				kv = kv.Convert(kt)
			}
			out.SetMapIndex(kv, ev)
		}
		dv.Set(out)
		return nil
	}
}

func compileNodeSlice(t reflect.Type) func(*yaml.Node, reflect.Value) error {
	elem := nodePlanLocked(t.Elem())
	return func(n *yaml.Node, dv reflect.Value) error {
		if n.Kind != yaml.SequenceNode {
			return errDecline
		}
		// JSON's [] is an empty slice, not nil.
		out := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, c := range n.Content {
			if err := elem.value(c, out.Index(i)); err != nil {
				return err
			}
		}
		dv.Set(out)
		return nil
	}
}

// A field of a struct plan: its index path (through inlined structs) and
// the plan of its type.
type nodeField struct {
	index []int
	plan  *nodePlan
}

func compileNodeStruct(t reflect.Type) func(*yaml.Node, reflect.Value) error {
	fields := map[string]nodeField{}
	if !jsonFields(t, nil, fields) {
		return viaJSON
	}
	return func(n *yaml.Node, dv reflect.Value) error {
		if n.Kind != yaml.MappingNode {
			return errDecline
		}
		if err := checkKeys(n); err != nil {
			return err
		}
		for i := 0; i < len(n.Content); i += 2 {
			f, ok := fields[n.Content[i].Value]
			if !ok {
				// Dropped by the decoder, after go-yaml and JSON have
				// read it without an error.
				if err := scan(n.Content[i+1]); err != nil {
					return err
				}
				continue
			}
			fv := dv.Field(f.index[0])
			for _, j := range f.index[1:] {
				fv = fv.Field(j)
			}
			if err := f.plan.value(n.Content[i+1], fv); err != nil {
				return err
			}
		}
		return nil
	}
}

// jsonFields collects the JSON names of t's fields as encoding/json's
// typeFields names them: the json tag's name, the Go name when the tag
// has none, "-" skipped, unexported fields ignored, an anonymous struct
// field without a name inlined. It reports false where the rules get
// subtle (an embedded pointer or unexported struct, a ",string" option, a
// name given twice, a tag name JSON would not take); the type then goes
// through JSON as a whole.
func jsonFields(t reflect.Type, prefix []int, fields map[string]nodeField) bool {
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			if !sf.IsExported() || sf.Type.Kind() == reflect.Pointer {
				return false
			}
		} else if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := cutByte(tag, ',')
		for opts != "" {
			var opt string
			opt, opts, _ = cutByte(opts, ',')
			if opt == "string" {
				return false
			}
		}
		if name != "" && !plainTagName(name) {
			return false
		}
		index := append(append([]int(nil), prefix...), i)
		if name == "" && sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			if !jsonFields(sf.Type, index, fields) {
				return false
			}
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := fields[name]; dup {
			return false
		}
		fields[name] = nodeField{index: index, plan: nodePlanLocked(sf.Type)}
	}
	return true
}

// plainTagName: a tag name encoding/json takes as it is (isValidTag), of
// the characters API types use.
func plainTagName(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '_', c == '.', c == '$', c == '/':
		default:
			return false
		}
	}
	return true
}

func cutByte(s string, c byte) (before, after string, found bool) {
	for i := range len(s) {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// viaJSON decodes the value as the JSON path does, from the JSON that path
// prints for this node; a refusal is a decline (the whole object then
// takes that path, for its words).
func viaJSON(n *yaml.Node, dv reflect.Value) error {
	g, _, err := generic(n)
	if err != nil {
		return err
	}
	data, err := json.Marshal(g)
	if err != nil {
		return errDecline
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, dv.Addr().Interface()); err != nil {
		return errDecline
	}
	return nil
}

// checkKeys accepts a mapping whose keys go-yaml reads as distinct plain
// strings: a scalar resolving to !!str, valid UTF-8, no merge key ("<<"),
// none given twice (go-yaml's "mapping key already defined").
func checkKeys(n *yaml.Node) error {
	c := n.Content
	if len(c)%2 != 0 {
		return errDecline
	}
	for i := 0; i < len(c); i += 2 {
		k := c[i]
		s, ok := scalarOf(k)
		if !ok || s.kind != scalarString || (k.Value == "<<" && k.Tag != "!!str") {
			return errDecline
		}
	}
	if len(c) <= 32 {
		for i := 0; i < len(c); i += 2 {
			for j := i + 2; j < len(c); j += 2 {
				if c[i].Value == c[j].Value {
					return errDecline
				}
			}
		}
		return nil
	}
	seen := make(map[string]struct{}, len(c)/2)
	for i := 0; i < len(c); i += 2 {
		if _, dup := seen[c[i].Value]; dup {
			return errDecline
		}
		seen[c[i].Value] = struct{}{}
	}
	return nil
}

// scan accepts a value the decoder drops: go-yaml and JSON read it without
// an error when they take the same shapes decodeNode takes.
func scan(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if _, ok := scalarOf(n); !ok {
			return errDecline
		}
		return nil
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if err := scan(c); err != nil {
				return err
			}
		}
		return nil
	case yaml.MappingNode:
		if err := checkKeys(n); err != nil {
			return err
		}
		for i := 1; i < len(n.Content); i += 2 {
			if err := scan(n.Content[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return errDecline
}

// generic is the value go-yaml decodes the node to inside a
// map[string]any, with ints as int64 (what JSON gives them back as);
// printed says a float or a time is in it, which JSON gives back in
// another form.
func generic(n *yaml.Node) (v any, printed bool, err error) {
	switch n.Kind {
	case yaml.ScalarNode:
		s, ok := scalarOf(n)
		if !ok {
			return nil, false, errDecline
		}
		switch s.kind {
		case scalarString:
			return s.str, false, nil
		case scalarInt:
			return s.i, false, nil
		case scalarFloat:
			return s.f, true, nil
		case scalarTime:
			return s.t, true, nil
		case scalarBool:
			return s.b, false, nil
		}
		return nil, false, nil
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			g, f, err := generic(c)
			if err != nil {
				return nil, false, err
			}
			out[i], printed = g, printed || f
		}
		return out, printed, nil
	case yaml.MappingNode:
		if err := checkKeys(n); err != nil {
			return nil, false, err
		}
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i < len(n.Content); i += 2 {
			g, f, err := generic(n.Content[i+1])
			if err != nil {
				return nil, false, err
			}
			out[n.Content[i].Value], printed = g, printed || f
		}
		return out, printed, nil
	}
	return nil, false, errDecline
}

type scalarKind uint8

const (
	scalarNull scalarKind = iota
	scalarString
	scalarInt
	scalarFloat
	scalarBool
	scalarTime
)

type scalar struct {
	kind scalarKind
	str  string
	i    int64
	f    float64
	b    bool
	t    time.Time
}

// isNull says the node is a scalar go-yaml resolves to null; a scalar it
// resolves in a way decodeNode does not follow is a decline.
func isNull(n *yaml.Node) (bool, error) {
	if n.Kind != yaml.ScalarNode {
		return false, nil
	}
	s, ok := scalarOf(n)
	if !ok {
		return false, errDecline
	}
	return s.kind == scalarNull, nil
}

// scalarOf resolves a scalar node as go-yaml's decoder does (decoder.scalar
// with resolve), for the forms whose resolution is plain; ok is false for
// the others (timestamps, binary, hex or octal ints, exponents, .inf,
// custom tags, invalid UTF-8) and for a node that is not a scalar.
func scalarOf(n *yaml.Node) (scalar, bool) {
	if n.Kind != yaml.ScalarNode {
		return scalar{}, false
	}
	v := n.Value
	tag := n.Tag
	if tag == "!!str" || tag == "tag:yaml.org,2002:str" ||
		(tag == "" || tag == "!") && n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		if !utf8.ValidString(v) {
			return scalar{}, false
		}
		return scalar{kind: scalarString, str: v}, true
	}
	switch tag {
	case "", "!!null", "!!bool", "!!int", "!!float":
	case "!!timestamp":
		return timestamp(v)
	default:
		return scalar{}, false
	}
	switch v {
	case "", "~", "null", "Null", "NULL":
		return scalar{kind: scalarNull}, tag == "" || tag == "!!null"
	case "true", "True", "TRUE":
		return scalar{kind: scalarBool, b: true}, tag == "" || tag == "!!bool"
	case "false", "False", "FALSE":
		return scalar{kind: scalarBool}, tag == "" || tag == "!!bool"
	}
	switch decimalForm(v) {
	case formInt:
		i, err := strconv.ParseInt(v, 10, 64)
		return scalar{kind: scalarInt, i: i}, err == nil && (tag == "" || tag == "!!int")
	case formFloat:
		f, err := strconv.ParseFloat(v, 64)
		return scalar{kind: scalarFloat, f: f}, err == nil && (tag == "" || tag == "!!float")
	}
	if tag != "" || !utf8.ValidString(v) {
		return scalar{}, false
	}
	// An untagged plain scalar (a node built in memory; the parser tags
	// each): a string when resolve finds nothing else in it.
	switch c := v[0]; {
	case '0' <= c && c <= '9':
		if s, ok := timestamp(v); ok {
			return s, true // resolve tries a timestamp first
		}
		return scalar{}, false // other numbers: not followed
	case c == '+' || c == '-' || c == '.':
		return scalar{}, false // numbers, .inf: not followed
	case c == '<':
		return scalar{}, v != "<<" // merge key: not followed
	}
	return scalar{kind: scalarString, str: v}, true
}

// timestamp resolves a !!timestamp (or untagged) scalar as go-yaml does
// (parseTimestamp): a time.Time, which JSON prints in RFC 3339; one JSON
// cannot print is not followed.
func timestamp(v string) (scalar, bool) {
	i := 0
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	if i != 4 || i == len(v) || v[i] != '-' {
		return scalar{}, false
	}
	for _, format := range yamlTimestampFormats {
		if t, err := time.Parse(format, v); err == nil {
			if _, err := t.MarshalJSON(); err != nil {
				return scalar{}, false
			}
			return scalar{kind: scalarTime, t: t}, true
		}
	}
	return scalar{}, false
}

// yamlTimestampFormats are go-yaml's allowedTimestampFormats.
var yamlTimestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

type form uint8

const (
	formOther form = iota
	formInt        // -?(0|[1-9][0-9]*)
	formFloat      // -?(0|[1-9][0-9]*)\.[0-9]+
)

// decimalForm classifies the plain decimals whose go-yaml resolution is
// the obvious one: no sign but '-', no leading zeros (octal), no '_', no
// exponent, at most 18 digits before the point (never a timestamp, always
// an int64).
func decimalForm(v string) form {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	start := i
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 || (digits > 1 && v[start] == '0') {
		return formOther
	}
	if i == len(v) {
		return formInt
	}
	if v[i] != '.' {
		return formOther
	}
	i++
	frac := i
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	if i == frac || i != len(v) {
		return formOther
	}
	return formFloat
}
