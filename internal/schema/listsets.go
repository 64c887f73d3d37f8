package schema

import (
	"unicode/utf8"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateListSetsAndMaps is structurallisttype.ValidateListSetsAndMaps(nil,
// s, obj), the API server's check that x-kubernetes-list-type set lists
// hold no element twice and map lists no key twice. The upstream walk
// allocates a field path at every step down (~4 KB an object on the bench
// render) to report errors that real objects almost never have; so a
// read-only walk first tries to prove that it would report nothing, and
// only when it cannot is the upstream function called, whose answer is
// then returned unchanged.
func validateListSetsAndMaps(s *structuralschema.Structural, obj map[string]any) field.ErrorList {
	if listSetsMapsClean(s, obj) {
		return nil
	}
	return structurallisttype.ValidateListSetsAndMaps(nil, s, obj)
}

// maxPairwise bounds the lists whose elements or keys listSetsMapsClean
// compares pairwise (quadratic, allocation-free); a longer list set or
// map is left to the upstream function.
const maxPairwise = 128

// listSetsMapsClean reports whether ValidateListSetsAndMaps(nil, s, obj)
// is proven to return no error. It walks exactly where the upstream
// function walks, and answers false (not proven) wherever the upstream
// function would report, or where the proof would need more than
// comparing plain scalars:
//
//   - a set list of two or more elements, one of which is not a string,
//     int64, float64, bool or null (upstream compares compound elements by
//     their JSON encoding, and may fail to encode them);
//   - a map list with an element that is neither an object nor null
//     (upstream: "must be an object for an array of list-type map");
//   - a map list of two or more elements where a key value is not such a
//     scalar, or, with several key fields (compared by JSON encoding), not
//     a valid UTF-8 string, an int64, a bool or null: 1 and 1.0, or two
//     invalid UTF-8 strings, encode alike though Go tells them apart;
//   - two equal elements or keys (the duplicates upstream reports);
//   - a set or map list longer than maxPairwise.
//
// Under those restrictions Go's == on the values is exactly the equality
// upstream uses (a Go map of scalars, or equal JSON text), so a list that
// passes has no duplicate upstream would find.
func listSetsMapsClean(s *structuralschema.Structural, obj map[string]any) bool {
	if s == nil || obj == nil {
		return true
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
		for _, v := range obj {
			if !listSetsMapsValueClean(ap.Structural, v) {
				return false
			}
		}
	}
	if s.Properties == nil {
		return true
	}
	if len(s.Properties) <= len(obj) {
		for k := range s.Properties {
			if v, ok := obj[k]; ok && !listSetsMapsPropClean(s, k, v) {
				return false
			}
		}
		return true
	}
	for k, v := range obj {
		if !listSetsMapsPropClean(s, k, v) {
			return false
		}
	}
	return true
}

// listSetsMapsPropClean: field k of an object under s, of value v, when
// it is a property (its schema copied outside any loop, which keeps the
// copy on the stack through the recursion; inlined into the loop, the
// copy would move to the heap).
//
//go:noinline
func listSetsMapsPropClean(s *structuralschema.Structural, k string, v any) bool {
	sub, ok := s.Properties[k]
	return !ok || listSetsMapsValueClean(&sub, v)
}

func listSetsMapsValueClean(s *structuralschema.Structural, v any) bool {
	switch v := v.(type) {
	case []any:
		return listSetsMapsArrayClean(s, v)
	case map[string]any:
		return listSetsMapsClean(s, v)
	}
	return true
}

func listSetsMapsArrayClean(s *structuralschema.Structural, list []any) bool {
	if s.XListType != nil {
		switch *s.XListType {
		case "set":
			if !setDistinct(list) {
				return false
			}
		case "map":
			if !mapKeysDistinct(s.XListMapKeys, list) {
				return false
			}
		}
	}
	if s.Items != nil {
		for _, x := range list {
			if !listSetsMapsValueClean(s.Items, x) {
				return false
			}
		}
	}
	return true
}

// plainScalar: the values whose Go equality is the equality of upstream's
// map of scalars (hashable, no JSON encoding involved).
func plainScalar(v any) bool {
	switch v.(type) {
	case nil, string, int64, float64, bool:
		return true
	}
	return false
}

// setDistinct: a set list with no two equal elements, all plain scalars.
func setDistinct(list []any) bool {
	if len(list) <= 1 {
		return true // upstream checks nothing
	}
	if len(list) > maxPairwise {
		return false
	}
	for i, x := range list {
		if !plainScalar(x) {
			return false
		}
		for _, y := range list[:i] {
			if x == y {
				return false
			}
		}
	}
	return true
}

// mapKeysDistinct: a map list of objects (or nulls) with no two equal keys.
func mapKeysDistinct(keys []string, list []any) bool {
	for _, x := range list {
		if _, ok := x.(map[string]any); x != nil && !ok {
			return false // upstream: must be an object
		}
	}
	if len(list) <= 1 {
		return true
	}
	if len(list) > maxPairwise {
		return false
	}
	single := len(keys) == 1
	for _, x := range list {
		m, _ := x.(map[string]any)
		for _, k := range keys {
			v, ok := m[k]
			if !ok {
				continue
			}
			if single && !plainScalar(v) || !single && !jsonPlain(v) {
				return false
			}
		}
	}
	for i, x := range list {
		a, _ := x.(map[string]any)
		for _, y := range list[:i] {
			b, _ := y.(map[string]any)
			if sameKey(keys, a, b) {
				return false
			}
		}
	}
	return true
}

// jsonPlain: the values whose JSON encodings are equal exactly when the
// values are (Go ==), and never equal across these types.
func jsonPlain(v any) bool {
	switch v := v.(type) {
	case nil, int64, bool:
		return true
	case string:
		return utf8.ValidString(v)
	}
	return false
}

// sameKey: the key fields of a and b (nil: an element that is null, which
// has no key field) are equal, a field absent from both counting as equal
// and a field present in one only as different. With one key field this
// is upstream's "unspecified" key, with several its key object without
// the absent fields. With no key fields every two keys are equal.
func sameKey(keys []string, a, b map[string]any) bool {
	for _, k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		if oka != okb || oka && va != vb {
			return false
		}
	}
	return true
}
