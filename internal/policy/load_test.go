package policy

import (
	"errors"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

func TestLoad(t *testing.T) {
	b, err := os.ReadFile("testdata/load/require-pinned.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := Load(Source{Name: "require-pinned.yaml", Docs: parseDocs(t, string(b))})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Policies) != 1 || len(set.Bindings) != 1 || len(set.Params) != 1 {
		t.Fatalf("set = %+v", set)
	}
	mc := set.Policies[0].Spec.MatchConstraints
	if mc.NamespaceSelector == nil || mc.ObjectSelector == nil || mc.MatchPolicy == nil || string(*mc.MatchPolicy) != "Equivalent" {
		t.Errorf("defaults not applied: %+v", mc)
	}
	bad := map[string]string{
		"not a policy":      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n",
		"unknown field":     "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\nspec: {validatoins: []}\n",
		"beta":              "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\n",
		"no actions":        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: x}\nspec: {policyName: p}\n",
		"no resource rules": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\nspec: {validations: [{expression: 'true'}]}\n",
		"param not-found":   "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: x}\nspec: {policyName: p, validationActions: [Deny], paramRef: {name: y}}\n",
		"unknown action":    "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: x}\nspec: {policyName: p, validationActions: [Block]}\n",
		"no kind":           "metadata: {name: x}\n",
	}
	for name, doc := range bad {
		nodes, err := kio.FromBytes([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Load(Source{Name: "f.yaml", Docs: nodes})
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "f.yaml") {
			t.Errorf("%s: err = %v, want a ConfigError naming the file", name, err)
		}
	}
}

func FuzzLoad(f *testing.F) {
	b, err := os.ReadFile("testdata/load/require-pinned.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, c := range matrixCases[:6] {
		f.Add([]byte(subst(c.setup, "fuzz")))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := kio.FromBytes(data)
		if err != nil {
			return
		}
		set, err := Load(Source{Name: "fuzz", Docs: nodes})
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error is not a ConfigError: %v", err)
			}
			return
		}
		for _, p := range set.Policies {
			if p.Spec.FailurePolicy == nil || p.Spec.MatchConstraints == nil {
				t.Fatalf("policy %q not defaulted", p.Name)
			}
		}
	})
}

// A policy whose expressions the API server would not compile is refused
// on load, failurePolicy Ignore or not: the API server refuses to store it
// (its create-time type check), so it would never run.
func TestLoadRefusesWhatDoesNotCompile(t *testing.T) {
	head := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\nspec:\n  failurePolicy: Ignore\n  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}\n"
	for name, c := range map[string]struct{ spec, want string }{
		"syntax":             {"  validations: [{expression: 'object.spec.containers.all(c, '}]\n", "spec.validations[0].expression"},
		"undeclared field":   {"  validations: [{expression: 'object.nosuch.all(c, true) && params.x'}]\n", "spec.validations[0].expression"},
		"message expression": {"  validations: [{expression: 'true', messageExpression: '1 +'}]\n", "spec.validations[0].messageExpression"},
		"variable":           {"  variables: [{name: v, expression: 'object.spec.containers.map('}]\n  validations: [{expression: 'true'}]\n", "spec.variables[0].expression"},
		"match condition":    {"  matchConditions: [{name: m, expression: '\"a\" + 1'}]\n  validations: [{expression: 'true'}]\n", "spec.matchConditions[0].expression"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(Source{Name: "p.yaml", Docs: parseDocs(t, head+c.spec)})
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "the API server refuses it") {
				t.Fatalf("err = %v, want a ConfigError naming %s", err, c.want)
			}
		})
	}
	ok := head + "  variables: [{name: n, expression: 'size(object.spec.containers)'}]\n  validations: [{expression: 'variables.n > 0', messageExpression: '\"containers: \" + string(variables.n)'}]\n"
	if _, err := Load(Source{Name: "p.yaml", Docs: parseDocs(t, ok)}); err != nil {
		t.Fatalf("a policy that compiles: %v", err)
	}
}
