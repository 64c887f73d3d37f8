package apivalidation

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// fromUnstructured fills dst, a pointer to a new (zero) API object, from
// obj as runtime.DefaultUnstructuredConverter.FromUnstructured does, with
// the same result, at a fraction of its cost: the converter looks up every
// field of every struct by reflection on each call, where this compiles a
// plan per Go type once and then walks only the keys the object has,
// writing each value at its field's offset.
//
// It covers the shapes FromUnstructured gives a meaning to on the data
// model of package schema (map[string]any, []any, string, int64, bool,
// nil; no float64, see exactNumbers). Anything else (a value of the wrong
// type, a number out of range, a Go type it has no plan for) is
// errNoPlan, and the caller takes FromUnstructured's own path, so every
// refusal keeps that path's words.
func fromUnstructured(obj map[string]any, dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return errNoPlan
	}
	return planOf(v.Type().Elem()).decode(obj, v.UnsafePointer())
}

var errNoPlan = errors.New("no in-memory conversion for this value")

// A plan fills a value of one Go type from an unstructured value that is
// not nil, into a destination that is still zero: p points at the value,
// inside an object the caller holds.
type plan struct {
	decode func(src any, p unsafe.Pointer) error
}

// plans holds the finished plans; building, under plansMu, the ones being
// compiled (recursive types, JSONSchemaProps, reach their own plan while it
// is built: the closures read a plan's decode only when they run, after
// the whole tree is built and published).
var (
	plans    sync.Map // reflect.Type → *plan
	plansMu  sync.Mutex
	building = map[reflect.Type]*plan{}
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	plansMu.Lock()
	defer plansMu.Unlock()
	p := planLocked(t)
	for bt, bp := range building {
		plans.Store(bt, bp)
	}
	clear(building)
	return p
}

func planLocked(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := building[t]; ok {
		return p
	}
	p := &plan{}
	building[t] = p
	p.decode = compile(t)
	return p
}

// value decodes src into p as fromUnstructured's per-value step does: nil
// leaves the zero value.
func (p *plan) value(src any, dst unsafe.Pointer) error {
	if src == nil {
		return nil
	}
	return p.decode(src, dst)
}

func noPlan(any, unsafe.Pointer) error { return errNoPlan }

// compile follows the order of apimachinery's fromUnstructured: simple
// kinds first, then a type with its own UnmarshalJSON, then maps, slices,
// pointers and structs. Each write goes through a pointer of the kind's
// representation (a named string type is a string in memory, and so on).
func compile(t reflect.Type) func(any, unsafe.Pointer) error {
	switch t.Kind() {
	case reflect.String:
		return func(src any, p unsafe.Pointer) error {
			s, ok := src.(string)
			if !ok {
				return errNoPlan
			}
			*(*string)(p) = s
			return nil
		}
	case reflect.Bool:
		return func(src any, p unsafe.Pointer) error {
			b, ok := src.(bool)
			if !ok {
				return errNoPlan
			}
			*(*bool)(p) = b
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return compileInt(t)
	case reflect.Float32:
		return func(src any, p unsafe.Pointer) error {
			i, ok := src.(int64)
			if !ok {
				return errNoPlan
			}
			*(*float32)(p) = float32(float64(i)) // reflect.Value.SetFloat's rounding
			return nil
		}
	case reflect.Float64:
		return func(src any, p unsafe.Pointer) error {
			i, ok := src.(int64)
			if !ok {
				return errNoPlan
			}
			*(*float64)(p) = float64(i)
			return nil
		}
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Struct:
	default:
		return noPlan // unsigned, interfaces, …: FromUnstructured's path
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return compileUnmarshaler(t)
	}
	switch t.Kind() {
	case reflect.Map:
		return compileMap(t)
	case reflect.Slice:
		return compileSlice(t)
	case reflect.Pointer:
		elemT := t.Elem()
		elem := planLocked(elemT)
		return func(src any, p unsafe.Pointer) error {
			np := reflect.New(elemT).UnsafePointer()
			if err := elem.decode(src, np); err != nil {
				return err
			}
			*(*unsafe.Pointer)(p) = np
			return nil
		}
	default:
		return compileStruct(t)
	}
}

// compileInt stores an int64 that fits the field's size, as
// reflect.Value.OverflowInt and SetInt decide and store it.
func compileInt(t reflect.Type) func(any, unsafe.Pointer) error {
	switch t.Size() {
	case 1:
		return storeInt[int8]
	case 2:
		return storeInt[int16]
	case 4:
		return storeInt[int32]
	case 8:
		return storeInt[int64]
	}
	return noPlan
}

// storeInt stores src, an int64, into a T when it fits (shifted out and
// back it is unchanged, as reflect.Value.OverflowInt decides).
func storeInt[T int8 | int16 | int32 | int64](src any, p unsafe.Pointer) error {
	i, ok := src.(int64)
	if !ok {
		return errNoPlan
	}
	shift := 64 - 8*unsafe.Sizeof(T(0))
	if (i<<shift)>>shift != i {
		return errNoPlan
	}
	*(*T)(p) = T(i)
	return nil
}

// compileUnmarshaler does what the converter does with a type that has its
// own UnmarshalJSON (structured-merge-diff's
// TypeReflectCacheEntry.FromUnstructured): the value as JSON, given to the
// type's UnmarshalJSON. The JSON of a string or an integer is written here
// when it is what json.Marshal writes (jsonScalar); anything else is
// json.Marshal's.
func compileUnmarshaler(t reflect.Type) func(any, unsafe.Pointer) error {
	return func(src any, p unsafe.Pointer) error {
		data, ok := jsonScalar(src)
		if !ok {
			var err error
			if data, err = json.Marshal(src); err != nil {
				return errNoPlan
			}
		}
		if err := reflect.NewAt(t, p).Interface().(json.Unmarshaler).UnmarshalJSON(data); err != nil {
			return errNoPlan
		}
		return nil
	}
}

// jsonScalar is json.Marshal(src) for an int64, a bool, and a string that
// json.Marshal writes unchanged between its quotes (plainJSONString).
func jsonScalar(src any) ([]byte, bool) {
	switch v := src.(type) {
	case string:
		if !plainJSONString(v) {
			return nil, false
		}
		b := make([]byte, 0, len(v)+2)
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"'), true
	case int64:
		return strconv.AppendInt(nil, v, 10), true
	case bool:
		return strconv.AppendBool(nil, v), true
	}
	return nil, false
}

// plainJSONString reports whether every byte of s is printable ASCII that
// json.Marshal does not escape: not a control character, not '"' or '\\',
// and not '<', '>' or '&' (escaped for HTML by default). Such a string is
// also valid UTF-8, which json.Marshal would otherwise repair.
func plainJSONString(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func compileMap(t reflect.Type) func(any, unsafe.Pointer) error {
	if t.Key().Kind() != reflect.String {
		return noPlan
	}
	if t == reflect.TypeFor[map[string]string]() {
		// Labels, annotations, selectors, ConfigMap data: the map built
		// as the compiled code builds it.
		return func(src any, p unsafe.Pointer) error {
			m, ok := src.(map[string]any)
			if !ok {
				return errNoPlan
			}
			if m == nil {
				return nil
			}
			out := make(map[string]string, len(m))
			for k, v := range m {
				switch v := v.(type) {
				case string:
					out[k] = v
				case nil:
					out[k] = "" // nil leaves the zero value
				default:
					return errNoPlan
				}
			}
			*(*map[string]string)(p) = out
			return nil
		}
	}
	elemT, keyT := t.Elem(), t.Key()
	elem := planLocked(elemT)
	return func(src any, p unsafe.Pointer) error {
		m, ok := src.(map[string]any)
		if !ok {
			return errNoPlan
		}
		if m == nil {
			return nil
		}
		out := reflect.MakeMapWithSize(t, len(m))
		// One key and one element, reused: SetMapIndex copies both.
		kv := reflect.New(keyT).Elem()
		ep := reflect.New(elemT)
		ev, eptr := ep.Elem(), ep.UnsafePointer()
		for k, v := range m {
			ev.SetZero()
			if err := elem.value(v, eptr); err != nil {
				return err
			}
			kv.SetString(k)
			out.SetMapIndex(kv, ev)
		}
		*(*unsafe.Pointer)(p) = out.UnsafePointer()
		return nil
	}
}

func compileSlice(t reflect.Type) func(any, unsafe.Pointer) error {
	elemT := t.Elem()
	if elemT.Kind() == reflect.Uint8 {
		return compileBytes(t)
	}
	elem := planLocked(elemT)
	size := elemT.Size()
	return func(src any, p unsafe.Pointer) error {
		l, ok := src.([]any)
		if !ok {
			return errNoPlan
		}
		if l == nil {
			return nil
		}
		base := reflect.MakeSlice(t, len(l), len(l)).UnsafePointer()
		for i, v := range l {
			if err := elem.value(v, unsafe.Add(base, uintptr(i)*size)); err != nil {
				return err
			}
		}
		*(*sliceHeader)(p) = sliceHeader{data: base, len: len(l), cap: len(l)}
		return nil
	}
}

// compileBytes decodes a []byte from its base64 string, as the converter
// does (json.Marshal of the string, then json.Unmarshal into the slice:
// encoding/json's base64.StdEncoding.Decode of the string's bytes, the
// slice's capacity its DecodedLen). A string json.Marshal would change
// (invalid UTF-8) takes that path itself.
func compileBytes(t reflect.Type) func(any, unsafe.Pointer) error {
	return func(src any, p unsafe.Pointer) error {
		s, ok := src.(string)
		if !ok {
			return errNoPlan
		}
		if s == "" {
			*(*sliceHeader)(p) = sliceHeader{data: reflect.MakeSlice(t, 0, 0).UnsafePointer()}
			return nil
		}
		var data []byte
		if utf8.ValidString(s) {
			b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
			n, err := base64.StdEncoding.Decode(b, []byte(s))
			if err != nil {
				return errNoPlan
			}
			data = b[:n]
		} else {
			marshalled, err := json.Marshal(s)
			if err != nil {
				return errNoPlan
			}
			if err := json.Unmarshal(marshalled, &data); err != nil {
				return errNoPlan
			}
		}
		*(*[]byte)(p) = data
		return nil
	}
}

// A field of a struct plan: its JSON name, its offset in the struct
// (through inlined structs) and the plan of its type.
type structField struct {
	name   string
	offset uintptr
	plan   *plan
}

// fieldTable finds a struct's field by JSON name: open addressing over a
// power-of-two table, hashed on the name's length and its first and last
// bytes (the names of one struct rarely share all three), each candidate
// compared in full. Cheaper than a map[string] lookup, which hashes the
// whole key.
type fieldTable struct {
	slots []structField // name "" is an empty slot
	mask  uintptr
}

func fieldHash(k string) uintptr {
	return uintptr(len(k))*0x9e3779b1 ^ uintptr(k[0])*0x85ebca6b ^ uintptr(k[len(k)-1])*0xc2b2ae35
}

func newFieldTable(fields map[string]structField) fieldTable {
	size := 8
	for size < 2*len(fields) {
		size *= 2
	}
	t := fieldTable{slots: make([]structField, size), mask: uintptr(size - 1)}
	for name, f := range fields {
		f.name = name
		i := fieldHash(name) & t.mask
		for t.slots[i].name != "" {
			i = (i + 1) & t.mask
		}
		t.slots[i] = f
	}
	return t
}

func (t *fieldTable) lookup(k string) *structField {
	if k == "" {
		return nil
	}
	for i := fieldHash(k) & t.mask; ; i = (i + 1) & t.mask {
		f := &t.slots[i]
		if f.name == k {
			return f
		}
		if f.name == "" {
			return nil
		}
	}
}

func compileStruct(t reflect.Type) func(any, unsafe.Pointer) error {
	fields := map[string]structField{}
	if !structFields(t, 0, fields) {
		return noPlan
	}
	table := newFieldTable(fields)
	return func(src any, p unsafe.Pointer) error {
		m, ok := src.(map[string]any)
		if !ok {
			return errNoPlan
		}
		for k, v := range m {
			if v == nil {
				continue // nulls leave the zero value
			}
			f := table.lookup(k)
			if f == nil {
				continue // unknown keys are dropped
			}
			if err := f.plan.decode(v, unsafe.Add(p, f.offset)); err != nil {
				return err
			}
		}
		return nil
	}
}

// structFields collects the JSON names of t's fields as the converter
// names them (fieldInfoFromField): the json tag's name, the Go name when
// the tag has none, and an anonymous field without a name inlined. It
// reports false for what it does not plan: unexported fields, inlined
// fields that are not plain structs, a name given twice.
func structFields(t reflect.Type, base uintptr, fields map[string]structField) bool {
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			return false
		}
		name := sf.Name
		if tag, ok := sf.Tag.Lookup("json"); ok && tag != "" {
			name = tag
			if j := indexByte(tag, ','); j >= 0 {
				name = tag[:j]
			}
			if name == "" && !sf.Anonymous {
				name = sf.Name
			}
		} else if sf.Anonymous {
			name = ""
		}
		offset := base + sf.Offset
		if name == "" {
			ft := sf.Type
			if ft.Kind() != reflect.Struct || reflect.PointerTo(ft).Implements(unmarshalerType) || !structFields(ft, offset, fields) {
				return false
			}
			continue
		}
		if _, dup := fields[name]; dup {
			return false
		}
		fields[name] = structField{offset: offset, plan: planLocked(sf.Type)}
	}
	return true
}

func indexByte(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return -1
}
