package apivalidation

import (
	"encoding/json"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// decode turns the unstructured object into the versioned type of its
// kind, as the API server's JSON decoding of the request body does. The
// object is converted in memory, without writing and reading JSON, when
// that gives what the JSON decoder gives:
//   - first by a plan compiled per Go type (fromUnstructured), which takes
//     only values whose conversion is exact (an integer within its
//     field's range, into an integer or float field) and declines the rest;
//   - then by runtime.DefaultUnstructuredConverter when every number in it
//     is an integer within int32 (the API types' integer fields are int32
//     or int64, never int or unsigned, by the API conventions), so no
//     conversion can round or overflow where the JSON decoder would refuse.
//
// Otherwise, and whenever the conversion fails, the object takes the JSON
// round trip, so every refusal is the JSON decoder's own words.
func decode(obj map[string]any, gvk schema.GroupVersionKind, scheme *runtime.Scheme, codecs serializer.CodecFactory) (runtime.Object, error) {
	return decodeInto(obj, nil, gvk, scheme, codecs)
}

// decodeInto is decode with the plan's destination given: into, a zero
// object of the kind (nil: a new one). The converter and the JSON decoder
// fill new objects of their own.
func decodeInto(obj map[string]any, into runtime.Object, gvk schema.GroupVersionKind, scheme *runtime.Scheme, codecs serializer.CodecFactory) (runtime.Object, error) {
	if into == nil {
		into, _ = scheme.New(gvk)
	}
	if into != nil && fromUnstructured(obj, into) == nil {
		return into, nil
	}
	if exactNumbers(obj) {
		if versioned, err := scheme.New(gvk); err == nil {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, versioned); err == nil {
				return versioned, nil
			}
		}
	}
	return decodeJSON(obj, gvk, codecs)
}

// decodeJSON is the API server's own path: the object as a JSON body,
// decoded by the scheme's deserializer.
func decodeJSON(obj map[string]any, gvk schema.GroupVersionKind, codecs serializer.CodecFactory) (runtime.Object, error) {
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s: %w", gvk.GroupVersion(), gvk.Kind, err)
	}
	versioned, _, err := codecs.UniversalDeserializer().Decode(body, nil, nil)
	return versioned, err
}

// exactNumbers reports whether every number in v is an int64 within the
// int32 range (the JSON data model of package schema: map[string]any,
// []any, string, int64, float64, bool, nil).
func exactNumbers(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if !exactNumbers(e) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !exactNumbers(e) {
				return false
			}
		}
	case string, bool, nil:
	case int64:
		return v >= math.MinInt32 && v <= math.MaxInt32
	default:
		return false
	}
	return true
}
