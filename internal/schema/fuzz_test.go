package schema

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzValidate feeds arbitrary YAML (objects, and CRDs that describe them)
// through the whole path: parse, convert, look up, validate. It must never
// panic; seeds are in testdata/fuzz/FuzzValidate.
func FuzzValidate(f *testing.F) {
	f.Add(deployment)
	f.Add(certCRDAndCert + "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: small, min: 3, max: 2}\n")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: [x]}\ndata: {a: &x 1, b: *x, <<: {c: d}}\n")
	// Admission objects the API server compiles on create (crdcheck_test.go).
	f.Add(brokenRuleCRD())
	f.Add(overBudgetCRD())
	f.Add("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  failurePolicy: Ignore\n  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}\n  validations: [{expression: 'object.spec.containers.all(c, '}]\n")
	v, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, docs string) {
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(docs), OmitReaderAnnotations: true}).Read()
		if err != nil {
			return
		}
		if _, err := v.Validate(context.Background(), nodes); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	})
}

// FuzzDefaultsAgree: the compiled defaulting walk leaves every object as
// the API server's structural defaulting (defaulting.Default over the
// kind's cut schema) does: nulls where a default or a non-nullable field
// is, lists of nulls, maps of additional properties. Seeds are in
// testdata/fuzz/FuzzDefaultsAgree.
func FuzzDefaultsAgree(f *testing.F) {
	f.Add(deployment)
	f.Add("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80}, null, {port: 81, protocol: null}]\n")
	f.Add("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: x, ports: [{containerPort: 80}], env: [null]}]\n  overhead: {cpu: null}\n")
	v, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var n yaml.Node
		if yaml.Unmarshal([]byte(doc), &n) != nil {
			return
		}
		obj, _ := toUnstructured(&n)
		m, ok := obj.(map[string]any)
		if !ok || hasNaN(m) {
			return // NaN is not equal to itself: DeepEqual cannot compare
		}
		c, _ := v.lookup(Result{APIVersion: str(m["apiVersion"]), Kind: str(m["kind"])}, nil)
		if c == nil || c.walks.defaults == nil {
			return
		}
		want, got := runtime.DeepCopyJSON(m), runtime.DeepCopyJSON(m)
		structuraldefaulting.Default(want, c.walks.defaults)
		c.walks.defaulter.apply(got)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("defaulting differs:\n Default %v\n walk    %v", want, got)
		}
	})
}

// hasNaN reports whether a JSON value holds a NaN.
func hasNaN(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsNaN(x)
	case map[string]any:
		for _, e := range x {
			if hasNaN(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNaN(e) {
				return true
			}
		}
	}
	return false
}
