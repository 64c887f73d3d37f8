package rolloutvalidation

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// decodeTargets are the Go types Validate decodes objects into (the
// Rollout, what it references, a workloadRef's template and selector),
// and an Experiment.
var decodeTargets = []func() any{
	func() any { return &v1alpha1.Rollout{} },
	func() any { return &v1alpha1.AnalysisTemplate{} },
	func() any { return &v1alpha1.ClusterAnalysisTemplate{} },
	func() any { return &v1alpha1.Experiment{} },
	func() any { return &corev1.Service{} },
	func() any { return &networkingv1.Ingress{} },
	func() any { return &extensionsv1beta1.Ingress{} },
	func() any { return &corev1.PodTemplateSpec{} },
	func() any { return &metav1.LabelSelector{} },
	func() any { var m map[string]any; return &m },
}

// decodeStats counts, per kind of object decoded into its own type, how
// many the node tree gave out of those the JSON path decodes.
type decodeStats map[string][2]int

// sameDecode decodes obj into out's type by decodeJSON (the node tree,
// else JSON) and by decodeViaJSON alone, and reports any difference in the
// value or the error's words. It returns whether the node tree gave it.
func sameDecode(t testing.TB, where string, obj *yaml.RNode, newOut func() any) bool {
	t.Helper()
	taken, _ := compareDecode(t, where, obj, newOut)
	return taken
}

// compareDecode is sameDecode, and also says whether the JSON path decodes
// the object without an error.
func compareDecode(t testing.TB, where string, obj *yaml.RNode, newOut func() any) (taken, decodes bool) {
	t.Helper()
	fast, slow, direct := newOut(), newOut(), newOut()
	ferr := decodeJSON(obj, fast)
	serr := decodeViaJSON(obj, slow)
	derr := decodeNode(obj.YNode(), direct)
	typ := reflect.TypeOf(fast).Elem()
	if derr != nil && !errors.Is(derr, errDecline) {
		t.Errorf("%s: %v: decodeNode gave an error other than a decline: %v", where, typ, derr)
	}
	if derr == nil && serr != nil {
		t.Errorf("%s: %v: decoded from the node, but the JSON path refuses it: %v", where, typ, serr)
	}
	if derr == nil && !reflect.DeepEqual(direct, slow) {
		t.Errorf("%s: %v: decoded from the node differently:\nnode %#v\nJSON %#v", where, typ, direct, slow)
	}
	if (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
		t.Errorf("%s: %v: decodeJSON error %v, JSON path error %v", where, typ, ferr, serr)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: %v: decodeJSON differs from the JSON path:\n%#v\n%#v", where, typ, fast, slow)
	}
	return derr == nil, serr == nil
}

// compareStream decodes every object of a YAML stream into every target
// type both ways.
func compareStream(t testing.TB, where string, data []byte, stats decodeStats) {
	t.Helper()
	objs, err := kio.FromBytes(data)
	if err != nil {
		return // not a stream of objects: not this test's subject
	}
	for _, obj := range objs {
		kind := "?"
		if obj.YNode().Kind == yaml.MappingNode {
			kind = obj.GetKind()
		}
		for _, target := range decodeTargets {
			ok, decodes := compareDecode(t, where+": "+kind, obj, target)
			if typ := reflect.TypeOf(target()).Elem(); decodes && sameKind(kind, typ) {
				s := stats[kind]
				s[1]++
				if ok {
					s[0]++
				}
				stats[kind] = s
			}
		}
	}
}

// sameKind: the object decoded into its own kind's type.
func sameKind(kind string, typ reflect.Type) bool {
	if kind == "Ingress" {
		return typ == reflect.TypeFor[networkingv1.Ingress]()
	}
	return typ.Name() == kind
}

// TestDecodeNodeIsDecodeJSON: on every object of the vendored corpus, of
// the Rollouts rules' corpus (the invalid-spec corpus included) and of a
// generated bench render, decoded into every type Validate decodes, the
// node-tree decoder gives the JSON path's value exactly, and decodeJSON
// gives that path's value and error words. The Rollouts and the objects
// they reference must mostly take the node tree (else the fast path is
// dead code).
func TestDecodeNodeIsDecodeJSON(t *testing.T) {
	stats := decodeStats{}
	testutil.CorpusYAML(t, func(path string, data []byte) { compareStream(t, path, data, stats) })
	testutil.YAMLFiles(t, filepath.Join(testutil.Root(t), "internal", "rules", "rollouts", "testdata"), func(path string, data []byte) {
		compareStream(t, path, data, stats)
	})
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 400, Images: 20, Registry: "ghcr.io", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	bench := decodeStats{}
	compareStream(t, "bench render", buf.Bytes(), bench)
	for kind, s := range stats {
		t.Logf("corpus %s: %d of %d from the node tree", kind, s[0], s[1])
	}
	for kind, s := range bench {
		t.Logf("bench %s: %d of %d from the node tree", kind, s[0], s[1])
	}
	if s := bench["Rollout"]; s[1] == 0 || s[0] != s[1] {
		t.Errorf("bench render: %d of %d Rollouts from the node tree; want all", s[0], s[1])
	}
	for _, kind := range []string{"Rollout", "AnalysisTemplate", "Service"} {
		if s := stats[kind]; s[1] == 0 || s[0]*10 < s[1]*9 {
			t.Errorf("corpus: %d of %d %ss from the node tree; want at least 90%%", s[0], s[1], kind)
		}
	}
}

// TestDecodeNodeDeclines: the shapes decodeNode leaves to the JSON path,
// each with the JSON path's own words where that path refuses it.
func TestDecodeNodeDeclines(t *testing.T) {
	for name, doc := range map[string]string{
		"duplicate key":          "kind: Rollout\nspec:\n  replicas: 1\n  replicas: 2\n",
		"duplicate dropped key":  "kind: Rollout\nspec:\n  foo: {a: 1, a: 2}\n",
		"type error":             "kind: Rollout\nspec:\n  replicas: two\n",
		"overflow":               "kind: Rollout\nspec:\n  replicas: 3000000000\n",
		"alias":                  "kind: Rollout\nmetadata: {labels: &l {a: b}, annotations: *l}\n",
		"merge key":              "kind: Rollout\nmetadata: {labels: {<<: {a: b}}}\n",
		"timestamp out of JSON":  "kind: Rollout\nmetadata: {creationTimestamp: 2024-01-01T00:00:00+24:00}\n",
		"octal":                  "kind: Rollout\nspec: {replicas: 010}\n",
		"hex":                    "kind: Rollout\nspec: {replicas: 0x10}\n",
		"int key":                "kind: Rollout\nspec: {1: a}\n",
		"bad quantity":           "kind: Rollout\nspec:\n  template:\n    spec:\n      containers: [{name: a, resources: {limits: {cpu: lots}}}]\n",
		"bad time":               "kind: Rollout\nmetadata: {creationTimestamp: yesterday}\n",
		"sequence for struct":    "kind: Rollout\nspec: [a]\n",
		"binary":                 "kind: Rollout\nmetadata: {annotations: {a: !!binary aGk=}}\n",
		"custom tag":             "kind: Rollout\nmetadata: {annotations: {a: !foo bar}}\n",
		"infinity in dropped":    "kind: Rollout\nspec: {foo: .inf}\n",
		"bool for string":        "kind: Rollout\nmetadata: {annotations: {a: true}}\n",
		"number for string":      "kind: Rollout\nmetadata: {annotations: {a: 1}}\n",
		"object for IntOrString": "kind: Rollout\nspec: {strategy: {canary: {maxSurge: {a: 1}}}}\n",
		"tagged null as int":     "kind: Rollout\nspec: {replicas: !!int null}\n",
		"exponent":               "kind: Rollout\nspec: {template: {spec: {containers: [{name: a, resources: {limits: {cpu: 1e3}}}]}}}\n",
	} {
		obj, err := yaml.Parse(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ro := &v1alpha1.Rollout{}
		if err := decodeNode(obj.YNode(), ro); !errors.Is(err, errDecline) {
			t.Errorf("%s: decodeNode took it (%v); it should leave it to the JSON path", name, err)
		}
		sameDecode(t, name, obj, func() any { return &v1alpha1.Rollout{} })
	}
}

// TestDecodeNodeTakes: shapes go-yaml and JSON read in another form than
// written, which decodeNode takes with the same result.
func TestDecodeNodeTakes(t *testing.T) {
	for name, doc := range map[string]string{
		"timestamp into string": "kind: Rollout\nmetadata: {annotations: {at: 2024-01-01}}\n",
		"timestamp into Time":   "kind: Rollout\nmetadata: {creationTimestamp: 2019-01-22T16:52:54+02:00}\n",
		"floats into any":       "kind: Rollout\nspec: {a: 1}\n",
		"null everywhere":       "kind: Rollout\nmetadata: {creationTimestamp: null, labels: {a: null}}\nspec: {replicas: ~, selector: null, strategy: {canary: {maxSurge: null, steps: [null, {setWeight: null}]}}}\n",
		"empty collections":     "kind: Rollout\nmetadata: {labels: {}}\nspec: {strategy: {canary: {steps: []}}}\n",
		"quantities":            "kind: Rollout\nspec: {template: {spec: {containers: [{name: a, resources: {limits: {cpu: 0.5, memory: 1Gi}, requests: {cpu: 1}}}]}}}\n",
	} {
		obj, err := yaml.Parse(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !sameDecode(t, name, obj, func() any { return &v1alpha1.Rollout{} }) {
			t.Errorf("%s: decodeNode left it to the JSON path", name)
		}
	}
}

// FuzzDecodeNode: for any YAML document, decoded into each type Validate
// decodes, decodeJSON gives what the JSON path gives, value and error
// words, and the node-tree decoder, when it takes the document, gives the
// same value. Seeds are a Rollout with its references and the shapes the
// decoder declines.
func FuzzDecodeNode(f *testing.F) {
	f.Add(rolloutSeed)
	f.Add("kind: Rollout\nspec:\n  replicas: 1\n  replicas: 2\n")
	f.Add("kind: Rollout\nmetadata: {labels: &l {a: b}, annotations: *l, creationTimestamp: null}\n")
	f.Add("kind: Rollout\nspec: {replicas: 010, strategy: {canary: {maxSurge: 25%, maxUnavailable: 0, steps: [{setWeight: 120}, {pause: {duration: 1h}}]}}}\n")
	f.Add("kind: Service\nspec: {ports: [{port: 80, targetPort: http, protocol: TCP}], selector: {app: a}}\n")
	f.Add("kind: AnalysisTemplate\nspec: {metrics: [{name: m, successCondition: 'result[0] >= 0.95', interval: 5m, provider: {web: {url: 'http://x', jsonBody: {a: [1, 2.5, true, null, {b: c}]}}}}]}\n")
	f.Add("kind: Ingress\nspec: {rules: [{host: a, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: s, port: {number: 80}}}}]}}]}\n")
	f.Add("kind: Rollout\nspec: {template: {spec: {containers: [{name: a, resources: {limits: {cpu: 0.5, memory: 1Gi}, requests: {cpu: 1}}}]}}}\n")
	f.Add("a: {\"\": 1, '1': -0, ~: x}\nb: [-0.0, 1.50, 123456789012345678, 1234567890123456789]\nc: !!str 5\nd: \"\\u00e9<&>\"\n")
	for _, form := range scalarForms {
		if !strings.Contains(form, "\n") {
			f.Add("kind: Rollout\nmetadata: {annotations: {a: " + form + "}}\nspec: {replicas: " + form + ", strategy: {canary: {maxSurge: " + form + "}}, x: [" + form + "]}\n")
		}
	}
	f.Fuzz(func(t *testing.T, doc string) {
		obj, err := yaml.Parse(doc)
		if err != nil || obj.YNode().Kind != yaml.MappingNode {
			return
		}
		for _, target := range decodeTargets {
			sameDecode(t, "fuzz", obj, target)
		}
	})
}

const rolloutSeed = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
  namespace: shop
  labels: {app: web}
  annotations: {note: "x & <y>"}
  creationTimestamp: null
spec:
  replicas: 3
  revisionHistoryLimit: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: ghcr.io/acme/web:1.2.3
        ports: [{containerPort: 8080, name: http}]
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: "1", memory: 256Mi}
        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 5}
        env: [{name: A, value: "1"}, {name: B, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
  strategy:
    canary:
      stableService: web-stable
      canaryService: web-canary
      maxSurge: 25%
      maxUnavailable: 0
      trafficRouting:
        nginx: {stableIngress: web}
      steps:
      - setWeight: 20
      - pause: {duration: 30s}
      - analysis:
          templates: [{templateName: success-rate}]
          args: [{name: service, value: web}]
      - pause: {}
`

// scalarForms are YAML values whose resolution by go-yaml has a rule of its
// own: ints in every base, floats, booleans of YAML 1.1 and 1.2, nulls,
// timestamps, explicit tags, strings that look like something else.
var scalarForms = []string{
	"1", "-1", "0", "-0", "+1", "007", "0x1f", "0o17", "0b101", "1_000", "-0b1",
	"9223372036854775807", "9223372036854775808", "-9223372036854775809",
	"123456789012345678", "1234567890123456789", "18446744073709551616",
	"1.5", "-0.0", "1.0", "1e3", "1E-3", ".5", "1.", ".inf", "-.Inf", ".nan", "2147483648.0",
	"true", "True", "TRUE", "false", "yes", "on", "off", "y", "n",
	"null", "Null", "~", "", "''", `""`, "'1'", `"true"`, "'null'",
	"2024-01-01", "2024-1-1", "2024-01-01T10:00:00Z", "2024-01-01t10:00:00.5+05:30",
	"2024-01-01 10:00:00", "2024-13-01", "0000-01-01", "2024-01-01T00:00:00+24:00",
	"!!str 1", "!!int 1", "!!int '1'", "!!int x", "!!float 1", "!!float 1.5", "!!bool true",
	"!!bool yes", "!!null ''", "!!null x", "!!binary aGk=", "!!timestamp 2024-01-01",
	"!!timestamp x", "!foo x", "! x", "!!map {}", "!!seq []", "!!str",
	"<<", "'<<'", "1Gi", "100m", "25%", "0.5Gi", "a & <b>", `"\u00e9\u2028"`, `"\xff"`,
	"|\n  multi\n  line\n", ">-\n  folded\n", "{a: 1}", "[1, 2]", "[]", "{}", "[null]", "{a: null}",
	"{a: 1, a: 2}", "{1: a}", "{? [a]: b}", "{<<: {a: 1}}", "[1.5, 2]", "{t: 2024-01-01}",
}

// scalarPlaces put a value where it lands in fields of every kind of Go
// type Validate decodes: string, *int32, bool, map[string]string,
// IntOrString, Quantity, metav1.Time, []string, a dropped field.
var scalarPlaces = []string{
	"metadata: {name: %s}\n",
	"metadata: {annotations: {a: %s}}\n",
	"metadata: {creationTimestamp: %s}\n",
	"spec: {replicas: %s}\n",
	"spec: {paused: %s}\n",
	"spec: {strategy: {canary: {maxSurge: %s}}}\n",
	"spec: {strategy: {canary: {steps: [{setWeight: %s}]}}}\n",
	"spec: {template: {spec: {containers: [{name: a, args: [%s], resources: {limits: {cpu: %s}}}]}}}\n",
	"spec: {dropped: %s}\n",
	"spec: {dropped: [%s]}\n",
}

// TestDecodeNodeScalars: every scalar form in every place, decoded into
// each type Validate decodes, gives the JSON path's value and words.
func TestDecodeNodeScalars(t *testing.T) {
	taken := 0
	for _, form := range scalarForms {
		for _, place := range scalarPlaces {
			indented := strings.ReplaceAll(form, "\n", "\n    ")
			doc := "kind: Rollout\n" + strings.ReplaceAll(place, "%s", "\n    "+indented+"\n    ")
			if !strings.Contains(form, "\n") {
				doc = "kind: Rollout\n" + strings.ReplaceAll(place, "%s", form)
			}
			obj, err := yaml.Parse(doc)
			if err != nil {
				continue // not YAML in this place
			}
			for _, target := range decodeTargets {
				if sameDecode(t, fmt.Sprintf("%q", doc), obj, target) {
					taken++
				}
			}
		}
	}
	if taken == 0 {
		t.Fatal("no document taken from the node tree")
	}
	t.Logf("%d decodes from the node tree", taken)
}
