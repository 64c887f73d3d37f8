package policy

import (
	"context"
	"strings"
	"testing"
)

// TestEquivalentWebhookConversionIsNoVerdict: under matchPolicy Equivalent
// an object of another served version is converted before the policy sees
// it; a CRD that converts through a webhook cannot be converted offline, so
// the gate has no verdict there (never a silent allow), while the version
// the policy names is still judged.
func TestEquivalentWebhookConversionIsNoVerdict(t *testing.T) {
	crd := strings.Replace(widgetCRD, "  versions:\n",
		"  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig: {url: \"https://convert.example.com/\"}\n  versions:\n", 1)
	for _, c := range []struct {
		matchPolicy, apiVersion string
		want                    Action
	}{
		{"Equivalent", "matrix.gate.example.com/v1beta1", NoVerdict},
		{"Equivalent", "matrix.gate.example.com/v1", Deny},
		{"Exact", "matrix.gate.example.com/v1beta1", ""},
	} {
		mc := matrixCase{name: "webhook-" + c.matchPolicy, setup: crd + "---" + widgetPolicy(c.matchPolicy) + "---" + widgetBinding,
			objects: []matrixObject{{widget(c.apiVersion, "big", 20), ""}}}
		set, render, start := caseInputs(t, 0, mc)
		rep, err := Evaluate(context.Background(), set, render, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got Action
		for _, r := range rep.Results {
			if r.Index == start {
				got = r.Action
				if r.Action == NoVerdict && !strings.Contains(r.Message, "converts through a webhook") {
					t.Errorf("%s %s: no-verdict message does not name the webhook conversion: %q", c.matchPolicy, c.apiVersion, r.Message)
				}
			}
		}
		if got != c.want {
			t.Errorf("%s %s: got %q, want %q (%+v)", c.matchPolicy, c.apiVersion, got, c.want, rep.Results)
		}
	}
}

// TestEquivalentBuiltinOtherVersionIsNoVerdict: a policy on autoscaling/v1
// HorizontalPodAutoscalers under matchPolicy Equivalent (the default) is
// evaluated by the API server on an autoscaling/v2 one, converted; the gate
// cannot convert built-in kinds, so that is no verdict — never the silent
// allow it was. Exact, or the object's own version, keep their verdicts.
func TestEquivalentBuiltinOtherVersionIsNoVerdict(t *testing.T) {
	policy := func(matchPolicy string) string {
		return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: hpa-max}
spec:
  matchConstraints:
    matchPolicy: ` + matchPolicy + `
    resourceRules:
    - {apiGroups: [autoscaling], apiVersions: [v1], operations: [CREATE], resources: [horizontalpodautoscalers]}
  validations:
  - expression: object.spec.maxReplicas <= 10
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: hpa-max}
spec: {policyName: hpa-max, validationActions: [Deny]}
`
	}
	hpa := func(apiVersion string) string {
		return "apiVersion: " + apiVersion + "\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: shop}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 1\n  maxReplicas: 50\n"
	}
	for _, c := range []struct {
		matchPolicy, apiVersion string
		want                    Action
	}{
		{"Equivalent", "autoscaling/v2", NoVerdict},
		{"Equivalent", "autoscaling/v1", Deny},
		{"Exact", "autoscaling/v2", Unbound}, // it checks nothing, and says so
	} {
		set, err := Load(Source{Name: "policy.yaml", Docs: parseDocs(t, policy(c.matchPolicy))})
		if err != nil {
			t.Fatal(err)
		}
		render := parseDocs(t, hpa(c.apiVersion))
		rep, err := Evaluate(context.Background(), set, render, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got Action
		for _, r := range rep.Results {
			got = r.Action
			if r.Action == NoVerdict && !strings.Contains(r.Message, "cannot convert built-in kinds") {
				t.Errorf("%s %s: message %q", c.matchPolicy, c.apiVersion, r.Message)
			}
		}
		if got != c.want {
			t.Errorf("%s %s: got %q, want %q (%+v)", c.matchPolicy, c.apiVersion, got, c.want, rep.Results)
		}
	}
}
