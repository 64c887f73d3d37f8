package apivalidation

import (
	"encoding/json"
	"errors"
	"reflect"
	"sync"
)

// fromUnstructured fills dst, a pointer to a new (zero) API object, from
// obj as runtime.DefaultUnstructuredConverter.FromUnstructured does, with
// the same result, at a fraction of its cost: the converter looks up every
// field of every struct by reflection on each call, where this compiles a
// plan per Go type once and then walks only the keys the object has.
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
	return planOf(v.Type().Elem()).decode(obj, v.Elem())
}

var errNoPlan = errors.New("no in-memory conversion for this value")

// A plan fills a value of one Go type from an unstructured value that is
// not nil, into a destination that is still zero.
type plan struct {
	decode func(src any, dv reflect.Value) error
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

// value decodes src into dv as fromUnstructured's per-value step does: nil
// leaves the zero value.
func (p *plan) value(src any, dv reflect.Value) error {
	if src == nil {
		return nil
	}
	return p.decode(src, dv)
}

func noPlan(any, reflect.Value) error { return errNoPlan }

// compile follows the order of apimachinery's fromUnstructured: simple
// kinds first, then a type with its own UnmarshalJSON, then maps, slices,
// pointers and structs.
func compile(t reflect.Type) func(any, reflect.Value) error {
	switch t.Kind() {
	case reflect.String:
		return func(src any, dv reflect.Value) error {
			s, ok := src.(string)
			if !ok {
				return errNoPlan
			}
			dv.SetString(s)
			return nil
		}
	case reflect.Bool:
		return func(src any, dv reflect.Value) error {
			b, ok := src.(bool)
			if !ok {
				return errNoPlan
			}
			dv.SetBool(b)
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(src any, dv reflect.Value) error {
			i, ok := src.(int64)
			if !ok || dv.OverflowInt(i) {
				return errNoPlan
			}
			dv.SetInt(i)
			return nil
		}
	case reflect.Float32, reflect.Float64:
		return func(src any, dv reflect.Value) error {
			i, ok := src.(int64)
			if !ok {
				return errNoPlan
			}
			dv.SetFloat(float64(i))
			return nil
		}
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Struct:
	default:
		return noPlan // unsigned, interfaces, …: FromUnstructured's path
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		// What the converter does (structured-merge-diff's
		// TypeReflectCacheEntry.FromUnstructured): the value as JSON,
		// given to the type's UnmarshalJSON.
		return func(src any, dv reflect.Value) error {
			data, err := json.Marshal(src)
			if err != nil {
				return errNoPlan
			}
			if err := dv.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data); err != nil {
				return errNoPlan
			}
			return nil
		}
	}
	switch t.Kind() {
	case reflect.Map:
		return compileMap(t)
	case reflect.Slice:
		return compileSlice(t)
	case reflect.Pointer:
		elem := planLocked(t.Elem())
		return func(src any, dv reflect.Value) error {
			nv := reflect.New(t.Elem())
			if err := elem.decode(src, nv.Elem()); err != nil {
				return err
			}
			dv.Set(nv)
			return nil
		}
	default:
		return compileStruct(t)
	}
}

func compileMap(t reflect.Type) func(any, reflect.Value) error {
	if t.Key().Kind() != reflect.String {
		return noPlan
	}
	elemT, keyT := t.Elem(), t.Key()
	elem := planLocked(elemT)
	plainKey := keyT == reflect.TypeFor[string]()
	return func(src any, dv reflect.Value) error {
		m, ok := src.(map[string]any)
		if !ok {
			return errNoPlan
		}
		if m == nil {
			return nil
		}
		out := reflect.MakeMapWithSize(t, len(m))
		for k, v := range m {
			ev := reflect.New(elemT).Elem()
			if err := elem.value(v, ev); err != nil {
				return err
			}
			kv := reflect.ValueOf(k)
			if !plainKey {
				kv = kv.Convert(keyT)
			}
			out.SetMapIndex(kv, ev)
		}
		dv.Set(out)
		return nil
	}
}

func compileSlice(t reflect.Type) func(any, reflect.Value) error {
	elemT := t.Elem()
	if elemT.Kind() == reflect.Uint8 {
		// []byte from its base64 string, as the converter decodes it.
		return func(src any, dv reflect.Value) error {
			s, ok := src.(string)
			if !ok {
				return errNoPlan
			}
			if s == "" {
				dv.Set(reflect.MakeSlice(t, 0, 0))
				return nil
			}
			marshalled, err := json.Marshal(s)
			if err != nil {
				return errNoPlan
			}
			var data []byte
			if err := json.Unmarshal(marshalled, &data); err != nil {
				return errNoPlan
			}
			dv.SetBytes(data)
			return nil
		}
	}
	elem := planLocked(elemT)
	return func(src any, dv reflect.Value) error {
		l, ok := src.([]any)
		if !ok {
			return errNoPlan
		}
		if l == nil {
			return nil
		}
		out := reflect.MakeSlice(t, len(l), len(l))
		for i, v := range l {
			if err := elem.value(v, out.Index(i)); err != nil {
				return err
			}
		}
		dv.Set(out)
		return nil
	}
}

// A field of a struct plan: its index path (through inlined structs) and
// the plan of its type.
type structField struct {
	index []int
	plan  *plan
}

func compileStruct(t reflect.Type) func(any, reflect.Value) error {
	fields := map[string]structField{}
	if !structFields(t, nil, fields) {
		return noPlan
	}
	return func(src any, dv reflect.Value) error {
		m, ok := src.(map[string]any)
		if !ok {
			return errNoPlan
		}
		for k, v := range m {
			f, ok := fields[k]
			if !ok || v == nil {
				continue // unknown keys are dropped, nulls leave the zero value
			}
			fv := dv.Field(f.index[0])
			for _, i := range f.index[1:] {
				fv = fv.Field(i)
			}
			if err := f.plan.decode(v, fv); err != nil {
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
func structFields(t reflect.Type, prefix []int, fields map[string]structField) bool {
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
		index := append(append([]int(nil), prefix...), i)
		if name == "" {
			ft := sf.Type
			if ft.Kind() != reflect.Struct || reflect.PointerTo(ft).Implements(unmarshalerType) || !structFields(ft, index, fields) {
				return false
			}
			continue
		}
		if _, dup := fields[name]; dup {
			return false
		}
		fields[name] = structField{index: index, plan: planLocked(sf.Type)}
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
