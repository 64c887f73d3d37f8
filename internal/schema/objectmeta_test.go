package schema

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
)

// sameObjectMeta runs upstream's GetObjectMetaWithOptions and SetObjectMeta
// on one copy of obj, getObjectMeta and setObjectMeta on another, with
// generateName between the two steps as check does, and fails unless the
// metadata, found, unknown field paths, errors and the resulting objects
// are the same. It reports whether the fast read was taken.
func sameObjectMeta(t testing.TB, name string, obj map[string]any) (fast bool) {
	t.Helper()
	up, mine := deepCopy(obj).(map[string]any), deepCopy(obj).(map[string]any)
	_, fast = fastObjectMeta(deepCopy(obj).(map[string]any))

	um, uFound, uUnknown, uErr := schemaobjectmeta.GetObjectMetaWithOptions(up, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	fm, fFound, fUnknown, fErr := getObjectMeta(mine)
	if !reflect.DeepEqual(um, fm) {
		t.Fatalf("%s: metadata differs (fast read %v)\nupstream: %#v\nmine:     %#v", name, fast, um, fm)
	}
	if uFound != fFound || !reflect.DeepEqual(uUnknown, fUnknown) || errString(uErr) != errString(fErr) {
		t.Fatalf("%s: found/unknown/error differ (fast read %v)\nupstream: %v %q %v\nmine:     %v %q %v", name, fast, uFound, uUnknown, uErr, fFound, fUnknown, fErr)
	}
	if um != nil {
		generateName(um)
		generateName(fm)
		uErr, fErr = schemaobjectmeta.SetObjectMeta(up, um), setObjectMeta(mine, fm)
		if errString(uErr) != errString(fErr) {
			t.Fatalf("%s: write-back errors differ: upstream %v, mine %v", name, uErr, fErr)
		}
	}
	if !sameJSON(up, mine) {
		t.Fatalf("%s: objects differ after the write-back (fast read %v)\nupstream: %#v\nmine:     %#v", name, fast, up, mine)
	}
	return fast
}

// sameWriteBack writes meta (read from one object by upstream) into a copy
// of another object with setObjectMeta and with upstream's SetObjectMeta:
// the write-back must not depend on what the metadata held before.
func sameWriteBack(t testing.TB, name string, from, into map[string]any) {
	t.Helper()
	meta, _, _, err := schemaobjectmeta.GetObjectMetaWithOptions(deepCopy(from).(map[string]any), schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil || meta == nil {
		return
	}
	up, mine := deepCopy(into).(map[string]any), deepCopy(into).(map[string]any)
	uErr, fErr := schemaobjectmeta.SetObjectMeta(up, meta.DeepCopy()), setObjectMeta(mine, meta.DeepCopy())
	if errString(uErr) != errString(fErr) || !sameJSON(up, mine) {
		t.Fatalf("%s: write-back differs\nupstream: %v %#v\nmine:     %v %#v", name, uErr, up, fErr, mine)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sameJSON is reflect.DeepEqual, with NaN equal to itself (a NaN
// elsewhere in the object is carried over, not compared).
func sameJSON(a, b any) bool {
	return reflect.DeepEqual(a, b) || fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// prepared is obj as check hands it to getObjectMeta: nulls dropped, the
// namespace defaulted (a namespaced kind) or removed (cluster-scoped).
func prepared(obj map[string]any, namespaced bool) map[string]any {
	obj = deepCopy(obj).(map[string]any)
	if md, ok := obj["metadata"].(map[string]any); ok && md != nil {
		if namespaced && str(md["namespace"]) == "" {
			md["namespace"] = "default"
		}
		if !namespaced {
			delete(md, "namespace")
		}
	}
	dropNulls(obj)
	return obj
}

// objectsOf converts every document as Validate does.
func objectsOf(nodes []*yaml.RNode) []map[string]any {
	var out []map[string]any
	for _, n := range nodes {
		v, _ := toUnstructured(n.YNode())
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// differential checks every object as read, and as check prepares it.
func differential(t testing.TB, name string, objs []map[string]any) (fast int) {
	t.Helper()
	for i, obj := range objs {
		id := fmt.Sprintf("%s[%d]", name, i)
		if sameObjectMeta(t, id, obj) {
			fast++
		}
		sameObjectMeta(t, id+" namespaced", prepared(obj, true))
		sameObjectMeta(t, id+" cluster-scoped", prepared(obj, false))
		if i > 0 {
			sameWriteBack(t, id+" into the previous object", obj, objs[i-1])
			sameWriteBack(t, id+" into the previous object, prepared", obj, prepared(objs[i-1], true))
		}
	}
	return fast
}

// TestObjectMetaBenchRender: every object of the bench render reads and
// writes back its metadata as upstream does, every one by the fast path.
func TestObjectMetaBenchRender(t *testing.T) {
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 9020, Images: 400, Registry: "ghcr.io", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	objs := objectsOf(parse(t, buf.String()))
	if len(objs) != 9020 {
		t.Fatalf("bench render: %d objects, want 9020", len(objs))
	}
	if fast := differential(t, "bench", objs); fast != len(objs) {
		t.Fatalf("bench render: %d of %d objects took the fast read, want all", fast, len(objs))
	}
}

// TestObjectMetaCorpus: every object of the vendored corpus and of this
// package's testdata, the same.
func TestObjectMetaCorpus(t *testing.T) {
	files, nodes := corpusObjects(t)
	total, fast := 0, 0
	for i, f := range files {
		objs := objectsOf(nodes[i])
		total += len(objs)
		fast += differential(t, f, objs)
		// The agreement test's mutants of the same objects.
		var mutants []*yaml.RNode
		for _, n := range nodes[i] {
			s := sample{origin: f, node: n}
			for _, m := range append(mutate(s), handWrittenClasses(s)...) {
				mutants = append(mutants, m.node)
			}
		}
		objs = objectsOf(mutants)
		total += len(objs)
		fast += differential(t, f+" mutants", objs)
	}
	var extra []*yaml.RNode
	for _, s := range append(handWritten(t), webhookMutants(t)...) {
		extra = append(extra, s.node)
	}
	objs := objectsOf(extra)
	total += len(objs)
	fast += differential(t, "hand-written", objs)
	err := filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".yml") {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ns, err := (&kio.ByteReader{Reader: bytes.NewReader(raw), OmitReaderAnnotations: true}).Read()
		if err != nil {
			return nil
		}
		objs := objectsOf(ns)
		total += len(objs)
		fast += differential(t, p, objs)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d objects, %d by the fast read", total, fast)
	if total < 1000 || fast < total/2 {
		t.Fatalf("%d objects, %d by the fast read: the corpus is missing or the fast read declines most of it", total, fast)
	}
}

// metadataMutants are metadata values the fast path must read as upstream
// does, or decline; fast says which (a mutant that silently moved from one
// side to the other is a change of the fast path's scope worth a look).
var metadataMutants = []struct {
	name string
	md   any
	fast bool
}{
	{"name only", map[string]any{"name": "a"}, true},
	{"name namespace labels annotations", map[string]any{"name": "a", "namespace": "n", "labels": map[string]any{"app": "a"}, "annotations": map[string]any{"x/y": "z"}}, true},
	{"generateName only", map[string]any{"generateName": "hook-"}, true},
	{"generateName too long", map[string]any{"generateName": strings.Repeat("g", 70)}, true},
	{"generateName and name", map[string]any{"generateName": "hook-", "name": "n"}, true},
	{"empty name", map[string]any{"name": ""}, true},
	{"empty namespace", map[string]any{"name": "a", "namespace": ""}, true},
	{"empty labels", map[string]any{"name": "a", "labels": map[string]any{}}, true},
	{"empty annotations", map[string]any{"name": "a", "annotations": map[string]any{}}, true},
	{"empty label value", map[string]any{"name": "a", "labels": map[string]any{"a": ""}}, true},
	{"null fields", map[string]any{"name": nil, "generateName": nil, "namespace": nil, "labels": nil, "annotations": nil, "finalizers": nil}, true},
	{"null creationTimestamp", map[string]any{"name": "a", "creationTimestamp": nil}, true},
	{"finalizers", map[string]any{"name": "a", "finalizers": []any{"x/y", "b"}}, true},
	{"empty finalizers", map[string]any{"name": "a", "finalizers": []any{}}, true},
	{"empty metadata", map[string]any{}, true},
	{"html and separators", map[string]any{"name": "<a>&", "annotations": map[string]any{"k": "line\u2028sep\u2029\x00\t\"\\"}}, true},
	{"unicode", map[string]any{"name": "café", "labels": map[string]any{"ключ": "値"}}, true},

	{"null metadata", nil, false},
	{"typed nil metadata", map[string]any(nil), false},
	{"metadata a string", "x", false},
	{"metadata a list", []any{"x"}, false},
	{"metadata a number", int64(1), false},
	{"label int", map[string]any{"name": "a", "labels": map[string]any{"v": int64(1)}}, false},
	{"label bool", map[string]any{"name": "a", "labels": map[string]any{"v": true}}, false},
	{"label float", map[string]any{"name": "a", "labels": map[string]any{"v": 1.5}}, false},
	{"label NaN", map[string]any{"name": "a", "labels": map[string]any{"v": math.NaN()}}, false},
	{"label null", map[string]any{"name": "a", "labels": map[string]any{"v": nil}}, false},
	{"label map", map[string]any{"name": "a", "labels": map[string]any{"v": map[string]any{"x": "y"}}}, false},
	{"labels a string", map[string]any{"name": "a", "labels": "x"}, false},
	{"labels a list", map[string]any{"name": "a", "labels": []any{"x"}}, false},
	{"labels typed nil", map[string]any{"name": "a", "labels": map[string]any(nil)}, false},
	{"annotation int", map[string]any{"name": "a", "annotations": map[string]any{"v": int64(1)}}, false},
	{"name int", map[string]any{"name": int64(5)}, false},
	{"name bool", map[string]any{"name": true}, false},
	{"name map", map[string]any{"name": map[string]any{}}, false},
	{"namespace int", map[string]any{"name": "a", "namespace": int64(1)}, false},
	{"invalid UTF-8 name", map[string]any{"name": "a\xff"}, false},
	{"invalid UTF-8 label key", map[string]any{"name": "a", "labels": map[string]any{"k\xfe": "v"}}, false},
	{"invalid UTF-8 label value", map[string]any{"name": "a", "labels": map[string]any{"k": "v\xc3"}}, false},
	{"invalid UTF-8 finalizer", map[string]any{"name": "a", "finalizers": []any{"\xff"}}, false},
	{"invalid UTF-8 keys collide", map[string]any{"name": "a", "labels": map[string]any{"k\xff": "1", "k\xfe": "2"}}, false},
	{"unknown field", map[string]any{"name": "a", "foo": "bar"}, false},
	{"unknown fields", map[string]any{"name": "a", "foo": "bar", "spec": map[string]any{}, "zzz": nil}, false},
	{"unknown field null", map[string]any{"name": "a", "foo": nil}, false},
	{"wrong case", map[string]any{"Name": "a"}, false},
	{"wrong case labels", map[string]any{"name": "a", "Labels": map[string]any{"a": "b"}}, false},
	{"creationTimestamp", map[string]any{"name": "a", "creationTimestamp": "2024-01-02T03:04:05Z"}, false},
	{"creationTimestamp offset", map[string]any{"name": "a", "creationTimestamp": "2024-01-02T03:04:05+02:00"}, false},
	{"creationTimestamp bad", map[string]any{"name": "a", "creationTimestamp": "yesterday"}, false},
	{"creationTimestamp int", map[string]any{"name": "a", "creationTimestamp": int64(0)}, false},
	{"finalizers a string", map[string]any{"name": "a", "finalizers": "x"}, false},
	{"finalizer int", map[string]any{"name": "a", "finalizers": []any{int64(1)}}, false},
	{"finalizer null", map[string]any{"name": "a", "finalizers": []any{nil}}, false},
	{"finalizers typed nil", map[string]any{"name": "a", "finalizers": []any(nil)}, false},
	{"uid", map[string]any{"name": "a", "uid": "0b1c"}, false},
	{"resourceVersion", map[string]any{"name": "a", "resourceVersion": "12"}, false},
	{"selfLink", map[string]any{"name": "a", "selfLink": "/api/v1/x"}, false},
	{"generation", map[string]any{"name": "a", "generation": int64(3)}, false},
	{"generation float", map[string]any{"name": "a", "generation": 1.5}, false},
	{"generation string", map[string]any{"name": "a", "generation": "3"}, false},
	{"deletionTimestamp", map[string]any{"name": "a", "deletionTimestamp": "2024-01-02T03:04:05Z"}, false},
	{"deletionGracePeriodSeconds", map[string]any{"name": "a", "deletionGracePeriodSeconds": int64(30)}, false},
	{"managedFields", map[string]any{"name": "a", "managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}}}}, false},
	{"managedFields unknown", map[string]any{"name": "a", "managedFields": []any{map[string]any{"manager": "kubectl", "bogus": int64(1)}}}, false},
	{"ownerReferences", map[string]any{"name": "a", "ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u", "controller": true, "blockOwnerDeletion": false}}}, false},
	{"ownerReferences unknown field", map[string]any{"name": "a", "ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u", "extra": "x"}}}, false},
	{"ownerReferences wrong type", map[string]any{"name": "a", "ownerReferences": []any{map[string]any{"controller": "yes"}}}, false},
	{"empty ownerReferences", map[string]any{"name": "a", "ownerReferences": []any{}}, false},
}

// TestObjectMetaMutants: each mutant's metadata, in a ConfigMap as read
// and as check prepares it, written back too into every other mutant's.
func TestObjectMetaMutants(t *testing.T) {
	objs := make([]map[string]any, 0, len(metadataMutants)+1)
	for _, m := range metadataMutants {
		obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": deepCopy(m.md), "data": map[string]any{"a": "b"}}
		if _, fast := fastObjectMeta(deepCopy(obj).(map[string]any)); fast != m.fast {
			t.Errorf("%s: fast read %v, want %v", m.name, fast, m.fast)
		}
		sameObjectMeta(t, m.name, obj)
		sameObjectMeta(t, m.name+" namespaced", prepared(obj, true))
		sameObjectMeta(t, m.name+" cluster-scoped", prepared(obj, false))
		objs = append(objs, obj)
	}
	objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}) // no metadata
	sameObjectMeta(t, "no metadata", objs[len(objs)-1])
	for i, from := range objs {
		for j, into := range objs {
			sameWriteBack(t, fmt.Sprintf("mutant %d into mutant %d", i, j), from, into)
		}
	}
}

// FuzzObjectMetaFastPath: objects from arbitrary YAML, and with an
// arbitrary string put in each metadata field the fast path reads (Go
// strings, so invalid UTF-8 too, which YAML cannot carry), read and
// written back as upstream does. The seeds are the mutants above, as far
// as YAML can say them.
func FuzzObjectMetaFastPath(f *testing.F) {
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: n, labels: {app: a}, annotations: {x/y: z}}\n", "a")
	f.Add("apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: hook-, annotations: {argocd.argoproj.io/hook: PreSync}}\n", "hook-")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {v: 1, w: true, x: 1.5, y: .nan, z: null}}\n", "\xff")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, creationTimestamp: null, finalizers: [a, b], labels: {}}\n", "")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, creationTimestamp: '2024-01-02T03:04:05Z', uid: u, generation: 2}\n", "é")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: c, uid: u, extra: x}]}\n", "<>&")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: [{manager: m, operation: Apply}], foo: bar, Name: b}\n", "\u2028")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: null\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: [a]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: x\n", "k\xfe")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: &n a, generateName: *n, finalizers: [], annotations: {<<: {a: b}}}\n", strings.Repeat("g", 70))
	f.Fuzz(func(t *testing.T, docs string, s string) {
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(docs), OmitReaderAnnotations: true}).Read()
		if err != nil {
			return
		}
		objs := objectsOf(nodes)
		differential(t, "fuzz", objs)
		for i, obj := range objs {
			md, ok := obj["metadata"].(map[string]any)
			if !ok || md == nil {
				continue
			}
			for _, put := range []func(md map[string]any){
				func(md map[string]any) { md["name"] = s },
				func(md map[string]any) { md["generateName"] = s; delete(md, "name") },
				func(md map[string]any) { md["namespace"] = s },
				func(md map[string]any) { md["labels"] = map[string]any{s: s, "k": "v"} },
				func(md map[string]any) { md["annotations"] = map[string]any{"a": s} },
				func(md map[string]any) { md["finalizers"] = []any{s} },
				func(md map[string]any) { md[s] = s },
			} {
				o := deepCopy(obj).(map[string]any)
				put(o["metadata"].(map[string]any))
				sameObjectMeta(t, fmt.Sprintf("fuzz[%d] with %q", i, s), o)
				sameObjectMeta(t, fmt.Sprintf("fuzz[%d] with %q, prepared", i, s), prepared(o, true))
			}
		}
	})
}
