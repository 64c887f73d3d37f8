package schema

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
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
