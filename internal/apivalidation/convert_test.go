package apivalidation

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// The writes by offset and the JSON written for UnmarshalJSON: byte
	// slices (newlines in base64, invalid UTF-8, empty), quantities and
	// int-or-strings as integers and as strings with characters
	// json.Marshal escapes, maps of named keys, int64 and float fields.
	f.Add([]byte("{apiVersion: v1, kind: Secret, metadata: {name: a}, data: {k: \"aGVs\\nbG8=\", e: \"\", n: null, bad: \"\\xff\"}}"))
	f.Add([]byte(`{apiVersion: v1, kind: ConfigMap, metadata: {name: a, annotations: {x: null}}, data: {a: "<&>"}, binaryData: {b: "AAEC"}}`))
	f.Add([]byte(`{apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {activeDeadlineSeconds: 9000000000, terminationGracePeriodSeconds: 30, containers: [{name: c, image: i, resources: {limits: {cpu: 2, memory: "1<Gi"}, requests: {cpu: "  1 ", memory: "\u00e9"}}, ports: [{containerPort: 80}], livenessProbe: {httpGet: {port: "a&b"}}, readinessProbe: {tcpSocket: {port: 8080}}}]}}`))
	f.Add([]byte(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: a}, spec: {selector: {matchLabels: {a: b}}, strategy: {rollingUpdate: {maxSurge: "25%", maxUnavailable: 0}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}], overhead: {cpu: 1}}}}}`))
	f.Add([]byte(`{apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, metadata: {name: a}, spec: {scaleTargetRef: {kind: Deployment, name: a, apiVersion: apps/v1}, maxReplicas: 3, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}], behavior: {scaleDown: {stabilizationWindowSeconds: 300, policies: [{type: Pods, value: 4, periodSeconds: 60}]}}}}`))
	f.Add([]byte(`{apiVersion: v1, kind: ResourceQuota, metadata: {name: a}, spec: {hard: {pods: 10, requests.cpu: "4", "limits.memory": 8Gi}}}`))
	f.Add([]byte(`{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: a, creationTimestamp: "2024-01-01T00:00:00Z"}, spec: {minAvailable: "50%", selector: {matchExpressions: [{key: a, operator: In, values: [b]}]}}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		sameAsConverter(t, "fuzz", doc)
	})
}

// TestJSONScalarIsJSONMarshal: the JSON fromUnstructured writes for a
// type's UnmarshalJSON is json.Marshal's, and it declines the strings
// json.Marshal would escape or repair.
func TestJSONScalarIsJSONMarshal(t *testing.T) {
	for _, v := range []any{"", "1Gi", "100m", " 1 ", "25%", "http", "a b~c", "<", ">", "&", `"`, `\`, "\n", "\x7f", "é", "\xff", "\u2028",
		int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), true, false} {
		sameJSONScalar(t, v)
	}
}

func sameJSONScalar(t *testing.T, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := jsonScalar(v)
	if !ok {
		if s, isString := v.(string); !isString || plainJSONString(s) {
			t.Errorf("jsonScalar(%#v) declined", v)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("jsonScalar(%#v) = %s, json.Marshal %s", v, got, want)
	}
}

// FuzzJSONScalar: for any string and integer, jsonScalar writes what
// json.Marshal writes, or declines.
func FuzzJSONScalar(f *testing.F) {
	f.Add("1Gi", int64(3))
	f.Add("<a&b>", int64(-7))
	f.Add("\xff\u2028\"\\", int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, s string, i int64) {
		sameJSONScalar(t, s)
		sameJSONScalar(t, i)
	})
}

// TestFromUnstructuredBytesAndScalars: the byte slices and the values of
// types with their own UnmarshalJSON (quantities, int-or-strings, times),
// in the shapes a render has and in the ones json.Marshal escapes, are
// the converter's.
func TestFromUnstructuredBytesAndScalars(t *testing.T) {
	for _, doc := range []string{
		"{apiVersion: v1, kind: Secret, metadata: {name: a}, data: {k: \"aGVs\\nbG8=\", e: \"\", n: null, p: \"YQ==\"}}",
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: a, labels: {x: z}, annotations: {x: null}}, data: {a: "<&>"}, binaryData: {b: "AAEC", c: ""}}`,
		`{apiVersion: v1, kind: Pod, metadata: {name: a, creationTimestamp: "2024-01-01T00:00:00Z"}, spec: {activeDeadlineSeconds: 9000000000, containers: [{name: c, image: i, resources: {limits: {cpu: 2, memory: 1Gi}, requests: {cpu: " 1 ", memory: "1e3"}}, livenessProbe: {httpGet: {port: "a&b"}}, readinessProbe: {tcpSocket: {port: 8080}}}]}}`,
		`{apiVersion: apps/v1, kind: Deployment, metadata: {name: a}, spec: {selector: {matchLabels: {a: b}}, strategy: {rollingUpdate: {maxSurge: "25%", maxUnavailable: 0}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}], overhead: {cpu: 1}}}}}`,
		`{apiVersion: v1, kind: ResourceQuota, metadata: {name: a}, spec: {hard: {pods: 10, requests.cpu: "4", limits.memory: 8Gi}}}`,
	} {
		if !sameAsConverter(t, doc, []byte(doc)) {
			t.Errorf("%s: no plan", doc)
		}
	}
}

// TestFieldTable: every JSON name of the structs of the API types is found
// at its own field, and names that are not fields (other structs' names,
// prefixes, case variants) are not.
func TestFieldTable(t *testing.T) {
	all := map[string]bool{}
	var tables []struct {
		fields map[string]structField
		table  fieldTable
	}
	for _, v := range []any{corev1.PodSpec{}, corev1.Container{}, metav1.ObjectMeta{}, corev1.ServiceSpec{}, appsv1.DeploymentSpec{}, corev1.Probe{}, corev1.Volume{}} {
		fields := map[string]structField{}
		plansMu.Lock()
		ok := structFields(reflect.TypeOf(v), 0, fields)
		plansMu.Unlock()
		if !ok {
			t.Fatalf("%T: no plan", v)
		}
		for name := range fields {
			all[name] = true
		}
		tables = append(tables, struct {
			fields map[string]structField
			table  fieldTable
		}{fields, newFieldTable(fields)})
	}
	for _, tb := range tables {
		for name := range all {
			want, isField := tb.fields[name]
			for _, k := range []string{name, name[:len(name)-1], name + "s", strings.ToUpper(name[:1]) + name[1:]} {
				got := tb.table.lookup(k)
				switch {
				case k == name && isField && (got == nil || got.offset != want.offset || got.plan != want.plan || got.name != name):
					t.Errorf("lookup(%q) = %+v, want the field at offset %d", k, got, want.offset)
				case got != nil && (tb.fields[k].plan == nil || got.name != k):
					t.Errorf("lookup(%q) = %+v, not a field", k, got)
				}
			}
		}
		if tb.table.lookup("") != nil {
			t.Error(`lookup("") found a field`)
		}
	}
}
