package apivalidation

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// sameAsConverter converts one document with fromUnstructured, with
// apimachinery's FromUnstructured and with the JSON decoder, and reports a
// difference. It
// returns whether fromUnstructured had a plan for it (false: the caller
// takes the converter's path anyway, nothing to compare).
func sameAsConverter(t *testing.T, where string, doc []byte) bool {
	t.Helper()
	var m map[string]any
	if yaml.Unmarshal(doc, &m) != nil || m == nil {
		return false
	}
	m = integers(m).(map[string]any)
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	if !Handles(apiVersion, kind) {
		return false
	}
	gv, _ := schema.ParseGroupVersion(apiVersion)
	fast, err := legacyscheme.Scheme.New(gv.WithKind(kind))
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	slow, _ := legacyscheme.Scheme.New(gv.WithKind(kind))
	ferr := fromUnstructured(m, fast)
	serr := runtime.DefaultUnstructuredConverter.FromUnstructured(m, slow)
	if ferr != nil {
		if !errors.Is(ferr, errNoPlan) {
			t.Errorf("%s: %s %s: an error other than errNoPlan: %v", where, apiVersion, kind, ferr)
		}
		return false
	}
	// The JSON decoder's object, whatever the numbers.
	viaJSON, jerr := decodeJSON(m, gv.WithKind(kind), legacyscheme.Codecs)
	if jerr != nil {
		t.Errorf("%s: %s %s: converted in memory, but the JSON decoder refuses it: %v", where, apiVersion, kind, jerr)
	} else if !apiequality.Semantic.DeepEqual(fast, viaJSON) {
		t.Errorf("%s: %s %s: the object differs from the JSON decoder's:\n%#v\n%#v", where, apiVersion, kind, fast, viaJSON)
	}
	// The converter's, exactly, where the converter is exact.
	if !exactNumbers(m) {
		return true
	}
	if serr != nil {
		t.Errorf("%s: %s %s: converted in memory, but the converter refuses it: %v", where, apiVersion, kind, serr)
		return true
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: %s %s: the objects differ:\n%#v\n%#v", where, apiVersion, kind, fast, slow)
	}
	return true
}

func eachDocument(t testing.TB, data []byte, each func(doc []byte)) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			return // not YAML this test can split: not its subject
		}
		each(doc)
	}
}

// TestFromUnstructuredIsTheConverters: on every built-in object of the
// vendored corpus and of a bench render, the planned conversion gives
// exactly (reflect.DeepEqual, not just semantically) what
// runtime.DefaultUnstructuredConverter gives.
func TestFromUnstructuredIsTheConverters(t *testing.T) {
	var planned int
	testutil.CorpusYAML(t, func(path string, data []byte) {
		eachDocument(t, data, func(doc []byte) {
			if sameAsConverter(t, path, doc) {
				planned++
			}
		})
	})
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 200, Images: 20, Registry: "ghcr.io"}); err != nil {
		t.Fatal(err)
	}
	eachDocument(t, buf.Bytes(), func(doc []byte) {
		if sameAsConverter(t, "bench render", doc) {
			planned++
		}
	})
	if planned < 200 {
		t.Fatalf("%d objects converted by plan; the corpus and the render should give at least 200", planned)
	}
	t.Logf("%d objects converted by plan, each the converter's", planned)
}

// TestFromUnstructuredLeavesTheRestToTheConverter: values of the wrong type
// and numbers out of range are errNoPlan, never a guess.
func TestFromUnstructuredLeavesTheRestToTheConverter(t *testing.T) {
	for _, c := range []struct{ name, doc string }{
		{"string for an integer", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a}, spec: {replicas: "2"}}`},
		{"integer for a string", `{apiVersion: v1, kind: ConfigMap, metadata: {name: 5}}`},
		{"list for a map", `{apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: [a]}`},
		{"map for a list", `{apiVersion: v1, kind: Service, metadata: {name: a}, spec: {ports: {a: b}}}`},
		{"bad quantity", `{apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: c, image: i, resources: {limits: {cpu: 1Gb}}}]}}`},
		{"bad base64", `{apiVersion: v1, kind: Secret, metadata: {name: a}, data: {k: "%%%"}}`},
		{"fraction", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a}, spec: {replicas: 1.5}}`},
		{"int32 overflow", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: a}, spec: {replicas: 3000000000}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(c.doc), &m); err != nil {
				t.Fatal(err)
			}
			m = integers(m).(map[string]any)
			gv, _ := schema.ParseGroupVersion(m["apiVersion"].(string))
			obj, err := legacyscheme.Scheme.New(gv.WithKind(m["kind"].(string)))
			if err != nil {
				t.Fatal(err)
			}
			if err := fromUnstructured(m, obj); !errors.Is(err, errNoPlan) {
				t.Fatalf("got %v, want errNoPlan", err)
			}
		})
	}
}

// FuzzFromUnstructured: on any YAML object of a built-in kind, the planned
// conversion either declines or gives the converter's object.
func FuzzFromUnstructured(f *testing.F) {
	f.Add([]byte(deployment))
	f.Add([]byte(`{apiVersion: v1, kind: Secret, metadata: {name: a}, data: {k: "aGk="}, stringData: {b: c}}`))
	f.Add([]byte(`{apiVersion: v1, kind: Service, metadata: {name: a, labels: {x: y}}, spec: {type: NodePort, ports: [{port: 80, targetPort: http}]}}`))
	f.Add([]byte(`{apiVersion: batch/v1, kind: CronJob, metadata: {name: a}, spec: {schedule: "* * * * *", jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: i}]}}}}}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		sameAsConverter(t, "fuzz", doc)
	})
}
