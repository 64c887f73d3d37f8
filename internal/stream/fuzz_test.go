package stream

import (
	"testing"
)

// FuzzParse feeds the stream parser arbitrary bytes (seeds in
// testdata/fuzz/FuzzParse): it must never panic or hang, and whatever it
// accepts is a list of objects with apiVersion and kind, free of aliases,
// that normalizes again without error.
func FuzzParse(f *testing.F) {
	for _, in := range agree {
		f.Add([]byte(in))
	}
	for _, c := range refuse {
		f.Add([]byte(c[0]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		for i, o := range objs {
			if o.GetKind() == "" || o.GetApiVersion() == "" {
				t.Fatalf("object %d accepted without apiVersion or kind", i)
			}
			if err := Normalize(o); err != nil {
				t.Fatalf("object %d does not normalize twice: %v", i, err)
			}
		}
	})
}

// FuzzCheckResourceList feeds the KRM function's input check.
func FuzzCheckResourceList(f *testing.F) {
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: &n p}, spec: {x: *n}}\n"))
	f.Add([]byte("kind: ResourceList\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = CheckResourceList(data)
	})
}
