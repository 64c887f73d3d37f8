package schema

import (
	"unicode/utf8"

	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// getObjectMeta is objectmeta.GetObjectMetaWithOptions(obj,
// {ReturnUnknownFieldPaths: true}), the strict decoding of an object's
// metadata, with the same results. Upstream marshals the metadata to JSON
// and decodes it strictly into a metav1.ObjectMeta for every object; the
// metadata of a render (name, namespace, labels, annotations) is read here
// directly when that provably gives what the JSON round trip gives
// (fastObjectMeta). Anything else takes upstream's own path, so every
// unknown field path and every error keeps its words.
//
// apivalidation's compiled conversion plans are not reused here: they
// give what runtime.DefaultUnstructuredConverter.FromUnstructured gives,
// which drops an unknown field silently, where this step is the strict
// JSON decoder's, which reports it.
func getObjectMeta(obj map[string]any) (*metav1.ObjectMeta, bool, []string, error) {
	if meta, ok := fastObjectMeta(obj); ok {
		return meta, true, nil, nil
	}
	return schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
}

// fastObjectMeta reads obj's metadata into a metav1.ObjectMeta when it is
// a map whose every key is one of the fields below, each of a type the
// JSON round trip decodes exactly:
//   - name, generateName, namespace: a string;
//   - labels, annotations: a map of strings (an empty map stays an empty,
//     non-nil map, as the decoder makes it);
//   - finalizers: a list of strings (empty stays empty, non-nil);
//   - any of these, or creationTimestamp, null: the zero value, as the
//     decoder leaves it.
//
// Every string, key or value, must be valid UTF-8: json.Marshal replaces
// invalid bytes with U+FFFD, which this could not reproduce. With those
// keys and types the strict decoder finds no unknown field and no error.
// ok is false for anything else (no metadata, metadata not a map, another
// key, another type), and the caller takes upstream's path.
func fastObjectMeta(obj map[string]any) (meta *metav1.ObjectMeta, ok bool) {
	md, isMap := obj["metadata"].(map[string]any)
	if !isMap || md == nil {
		return nil, false
	}
	meta = &metav1.ObjectMeta{}
	for k, v := range md {
		if v == nil {
			switch k {
			case "name", "generateName", "namespace", "labels", "annotations", "finalizers", "creationTimestamp":
				continue
			}
			return nil, false
		}
		switch k {
		case "name":
			if meta.Name, ok = validString(v); !ok {
				return nil, false
			}
		case "generateName":
			if meta.GenerateName, ok = validString(v); !ok {
				return nil, false
			}
		case "namespace":
			if meta.Namespace, ok = validString(v); !ok {
				return nil, false
			}
		case "labels":
			if meta.Labels, ok = stringMap(v); !ok {
				return nil, false
			}
		case "annotations":
			if meta.Annotations, ok = stringMap(v); !ok {
				return nil, false
			}
		case "finalizers":
			if meta.Finalizers, ok = stringList(v); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return meta, true
}

func validString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok && utf8.ValidString(s)
}

func stringMap(v any) (map[string]string, bool) {
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := validString(e)
		if !ok || !utf8.ValidString(k) {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

func stringList(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok || l == nil {
		return nil, false
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := validString(e)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// setObjectMeta is objectmeta.SetObjectMeta(obj, meta): obj's metadata
// becomes runtime.DefaultUnstructuredConverter.ToUnstructured(meta), with
// the same result (a map deep-equal to upstream's). When meta holds only
// the fields fastObjectMeta reads (everything else zero or empty) and the
// metadata is a map, that map is brought to the converter's form in
// place: a string field is there when it is not empty, labels,
// annotations and finalizers when they have entries, creationTimestamp
// (zero, omitzero) never, no other key. A labels, annotations or
// finalizers value already equal to meta's is kept as it is; so the
// metadata of a render, written back unchanged, costs a few lookups.
// Otherwise upstream writes it.
//
// In place, not a new map as upstream makes: check owns the object (it is
// converted from YAML for this check alone, a fresh map at every node, and
// check already sets and deletes the namespace in it).
func setObjectMeta(obj map[string]any, meta *metav1.ObjectMeta) error {
	md, ok := obj["metadata"].(map[string]any)
	if !ok || md == nil || meta == nil || !fastMeta(meta) {
		return schemaobjectmeta.SetObjectMeta(obj, meta)
	}
	for k := range md {
		switch k {
		case "name", "generateName", "namespace", "labels", "annotations", "finalizers":
		default:
			delete(md, k)
		}
	}
	setString(md, "name", meta.Name)
	setString(md, "generateName", meta.GenerateName)
	setString(md, "namespace", meta.Namespace)
	setStringMap(md, "labels", meta.Labels)
	setStringMap(md, "annotations", meta.Annotations)
	if len(meta.Finalizers) == 0 {
		delete(md, "finalizers")
	} else if !equalStringList(md["finalizers"], meta.Finalizers) {
		l := make([]any, len(meta.Finalizers))
		for i, s := range meta.Finalizers {
			l[i] = s
		}
		md["finalizers"] = l
	}
	return nil
}

// fastMeta reports whether every field of meta other than those
// setObjectMeta writes itself is one the converter omits.
func fastMeta(meta *metav1.ObjectMeta) bool {
	return meta.SelfLink == "" && meta.UID == "" && meta.ResourceVersion == "" && meta.Generation == 0 &&
		meta.CreationTimestamp.IsZero() && meta.DeletionTimestamp == nil && meta.DeletionGracePeriodSeconds == nil &&
		len(meta.OwnerReferences) == 0 && len(meta.ManagedFields) == 0
}

func setString(md map[string]any, k, v string) {
	if v == "" {
		delete(md, k)
		return
	}
	if s, ok := md[k].(string); !ok || s != v {
		md[k] = v
	}
}

func setStringMap(md map[string]any, k string, v map[string]string) {
	if len(v) == 0 {
		delete(md, k)
		return
	}
	if m, ok := md[k].(map[string]any); ok && len(m) == len(v) {
		same := true
		for mk, mv := range m {
			want, ok := v[mk]
			if s, isString := mv.(string); !ok || !isString || s != want {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	m := make(map[string]any, len(v))
	for mk, mv := range v {
		m[mk] = mv
	}
	md[k] = m
}

func equalStringList(cur any, v []string) bool {
	l, ok := cur.([]any)
	if !ok || len(l) != len(v) {
		return false
	}
	for i, e := range l {
		if s, ok := e.(string); !ok || s != v[i] {
			return false
		}
	}
	return true
}
