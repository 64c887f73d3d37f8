package apivalidation

import (
	"bytes"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// corpusObjects calls each with every built-in object Validate handles in
// the vendored corpus and in a bench render, in package schema's data
// model.
func corpusObjects(t *testing.T, each func(where string, m map[string]any)) {
	t.Helper()
	take := func(where string, doc []byte) {
		var m map[string]any
		if yaml.Unmarshal(doc, &m) != nil || m == nil {
			return
		}
		m = integers(m).(map[string]any)
		apiVersion, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		if Handles(apiVersion, kind) {
			each(where, m)
		}
	}
	testutil.CorpusYAML(t, func(path string, data []byte) {
		eachDocument(t, data, func(doc []byte) { take(path, doc) })
	})
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 200, Images: 20, Registry: "ghcr.io"}); err != nil {
		t.Fatal(err)
	}
	eachDocument(t, buf.Bytes(), func(doc []byte) { take("bench render", doc) })
}

// TestPooledConversionIsUnsafeConvertToVersions: the conversion into a
// pooled internal object gives exactly (reflect.DeepEqual) what
// Scheme.UnsafeConvertToVersion gives, on every object of the corpus and
// of a bench render; and the objects put back are zero.
func TestPooledConversionIsUnsafeConvertToVersions(t *testing.T) {
	var n int
	corpusObjects(t, func(where string, m map[string]any) {
		gv, _ := schema.ParseGroupVersion(m["apiVersion"].(string))
		gvk := gv.WithKind(m["kind"].(string))
		objs := objectsOf(legacyscheme.Scheme, gvk)
		if objs == nil {
			t.Errorf("%s: %s: no pooled objects for a kind Validate handles", where, gvk)
			return
		}
		prepare(m)
		var versioned [2]runtime.Object
		for i := range versioned {
			v, err := decode(runtime.DeepCopyJSON(m), gvk, legacyscheme.Scheme, legacyscheme.Codecs)
			if err != nil {
				return // refused before the conversion: not this test's subject
			}
			defaultPullPolicies(v)
			legacyscheme.Scheme.Default(v)
			versioned[i] = v
		}
		pooled, perr := objs.convert(legacyscheme.Scheme, versioned[0])
		want, werr := legacyscheme.Scheme.UnsafeConvertToVersion(versioned[1], schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal})
		if (perr == nil) != (werr == nil) {
			t.Errorf("%s: %s: pooled conversion %v, UnsafeConvertToVersion %v", where, gvk, perr, werr)
			return
		}
		if perr != nil {
			return
		}
		if !reflect.DeepEqual(pooled, want) {
			t.Errorf("%s: %s: the pooled conversion differs:\n%#v\n%#v", where, gvk, pooled, want)
		}
		n++
		into := objs.versioned.Get().(runtime.Object)
		objs.release(into, pooled)
		for _, o := range []any{objs.versioned.Get(), objs.internal.Get()} {
			if !reflect.ValueOf(o).Elem().IsZero() {
				t.Errorf("%s: %s: a pooled object is not zero: %#v", where, gvk, o)
			}
		}
	})
	if n < 200 {
		t.Fatalf("compared %d conversions; the corpus and the render should give at least 200", n)
	}
	t.Logf("compared %d conversions", n)
}

// TestValidateReusesNothingOfTheLastObject validates every object of the
// corpus and of a bench render (and a refused variant of each workload),
// then all of them again in reverse order, when the pooled objects have
// held other objects of the same kinds: the verdicts are the same.
func TestValidateReusesNothingOfTheLastObject(t *testing.T) {
	var objs []map[string]any
	corpusObjects(t, func(_ string, m map[string]any) {
		objs = append(objs, m)
		if _, ok := m["spec"].(map[string]any); ok {
			bad := runtime.DeepCopyJSON(m)
			bad["spec"].(map[string]any)["replicas"] = int64(-1)
			objs = append(objs, bad)
		}
	})
	verdicts := make([]string, len(objs))
	for i, m := range objs {
		v, _ := Validate(runtime.DeepCopyJSON(m))
		verdicts[i] = errorText(v)
	}
	var refused int
	for i := len(objs) - 1; i >= 0; i-- {
		v, _ := Validate(runtime.DeepCopyJSON(objs[i]))
		if got := errorText(v); got != verdicts[i] {
			t.Errorf("%s %s: first %q, again %q", objs[i]["kind"], objs[i]["metadata"], verdicts[i], got)
		}
		if v != nil {
			refused++
		}
	}
	if refused == 0 || refused == len(objs) {
		t.Fatalf("%d of %d objects refused: the test needs both", refused, len(objs))
	}
	t.Logf("%d objects, %d refused, the same verdicts twice", len(objs), refused)
}
