package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"
)

// unknownFields lists the fields of data that the Object type does not
// have, by full path ("spec.images.digests"), so an error names the field a
// user must fix rather than its last segment.
func unknownFields(data []byte) ([]string, error) {
	var generic any
	if err := sigsyaml.Unmarshal(data, &generic); err != nil {
		return nil, err
	}
	var out []string
	walk(generic, reflect.TypeOf(Object{}), "", &out)
	sort.Strings(out)
	return out, nil
}

func walk(v any, t reflect.Type, path string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(Entry{}) {
		return // an inline object is checked by its reader (policy, schema)
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFields(t)
		for k, child := range m {
			ft, known := fields[k]
			if !known {
				*out = append(*out, join(path, k))
				continue
			}
			walk(child, ft, join(path, k), out)
		}
	case reflect.Slice:
		if list, ok := v.([]any); ok {
			for i, child := range list {
				walk(child, t.Elem(), fmt.Sprintf("%s[%d]", path, i), out)
			}
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			for k, child := range m {
				walk(child, t.Elem(), join(path, k), out)
			}
		}
	}
}

func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue // not decoded (Spec.Unwaivable comes from spec.rules)
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
