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
