package webhooks

import (
	"strings"
	"testing"
)

const noLatestPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-latest}
spec:
  failurePolicy: Ignore
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}
  validations:
  - expression: EXPR
    message: images must not use the latest tag
`

func TestValidateAdmissionPolicy(t *testing.T) {
	for _, tc := range []struct{ name, expr, want string }{
		{"an expression that compiles", `'object.spec.containers.all(c, !c.image.endsWith(":latest"))'`, ""},
		{"an expression that does not compile, failurePolicy Ignore", `'object.spec.containers.all(c, '`, "spec.validations[0].expression: Invalid value"},
		{"an undeclared reference", `'objekt.spec.containers.size() > 0'`, "undeclared reference to 'objekt'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := validate(t, strings.Replace(noLatestPolicy, "EXPR", tc.expr, 1))
			if tc.want == "" && got != "" {
				t.Fatalf("the API server accepts this policy; got\n%s", got)
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("want %q in\n%s", tc.want, got)
			}
		})
	}
}

func TestValidateAdmissionPolicyBinding(t *testing.T) {
	const binding = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: no-latest}\nspec: {policyName: no-latest, validationActions: [ACTIONS]}\n"
	if got := validate(t, strings.Replace(binding, "ACTIONS", "Deny", 1)); got != "" {
		t.Fatalf("the API server accepts this binding; got\n%s", got)
	}
	if got := validate(t, strings.Replace(binding, "ACTIONS", "Deny, Warn", 1)); !strings.Contains(got, "spec.validationActions: Invalid value") {
		t.Fatalf("Deny with Warn: want the API server's refusal, got %q", got)
	}
}
