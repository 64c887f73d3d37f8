package stream

import (
	"reflect"
	"regexp"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
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
	for _, c := range mergeCases {
		f.Add([]byte(mergeDoc(c.data)))
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

// chunkLine is where a YAML error's chunk starts, in a parse error.
var chunkLine = regexp.MustCompile(` \(the chunk from line [0-9]+\)`)

// FuzzParseEach holds ParseEach to Parse on arbitrary bytes (seeds in
// testdata/fuzz/FuzzParseEach and FuzzParse's), cut in chunks of a few
// hundred bytes: the same objects or the same error, each object told
// once; and what the streamed check does with an accepted object (its
// content key, Pack and Unpack, Release) never panics, Unpack giving back
// the tree Pack packed.
func FuzzParseEach(f *testing.F) {
	for _, in := range agree {
		f.Add([]byte(in))
	}
	for _, c := range refuse {
		f.Add([]byte(c[0]))
	}
	defer func(n int) { eachChunkBytes = n }(eachChunkBytes)
	eachChunkBytes = 200
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := Parse(data, "fuzz.yaml")
		var mu sync.Mutex
		told := map[int]*yaml.RNode{}
		got, gerr := ParseEach(data, "fuzz.yaml", func(first int, objs []*yaml.RNode) {
			mu.Lock()
			defer mu.Unlock()
			for j, o := range objs {
				if told[first+j] != nil {
					t.Fatalf("object %d told twice", first+j)
				}
				told[first+j] = o
			}
		})
		// The same error, but for where the chunk starts that holds a YAML
		// error naming no line: ParseEach cuts the stream finer.
		if (werr == nil) != (gerr == nil) || (werr != nil && chunkLine.ReplaceAllString(werr.Error(), "") != chunkLine.ReplaceAllString(gerr.Error(), "")) {
			t.Fatalf("Parse error %v, ParseEach error %v", werr, gerr)
		}
		if werr != nil {
			return
		}
		if len(got) != len(want) || len(told) != len(got) {
			t.Fatalf("Parse %d objects, ParseEach %d, told %d", len(want), len(got), len(told))
		}
		for i := range got {
			if got[i].MustString() != want[i].MustString() || told[i] != got[i] {
				t.Fatalf("object %d differs, or was not told", i)
			}
			_ = manifest.ContentKeyOf(got[i])
			if p, ok := manifest.Pack(got[i]); ok {
				if u := manifest.Unpack(p); !reflect.DeepEqual(u.YNode(), got[i].YNode()) {
					t.Fatalf("object %d: Unpack(Pack) differs", i)
				}
			}
			manifest.Release(got[i])
			// manifest's readers, not kyaml's: GetName panics where metadata
			// is a list of an odd length (the object is a schema error, read
			// as written since ea558a6).
			if manifest.Kind(got[i]) != manifest.Kind(want[i]) || manifest.Name(got[i]) != manifest.Name(want[i]) {
				t.Fatalf("object %d: released, its kind or name changed", i)
			}
		}
	})
}
