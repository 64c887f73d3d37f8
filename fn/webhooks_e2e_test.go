package fn_test

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestE2EWebhookConfigurationsValidated: the built gate-fn validates a
// webhook configuration as the API server does (its main links
// internal/apivalidation/webhooks): sideEffects: Some is refused, None passes.
func TestE2EWebhookConfigurationsValidated(t *testing.T) {
	const webhook = `- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingWebhookConfiguration
  metadata: {name: shop-policy}
  webhooks:
  - name: validate.shop.example.com
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig: {service: {name: shop-policy, namespace: shop, path: /validate}, caBundle: ""}
    rules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
`
	bin := testutil.Bin(t, "gate-fn")
	for _, tc := range []struct {
		sideEffects string
		code        int
	}{{"None", 0}, {"Some", 1}} {
		r := testutil.Run(t, testutil.Root(t), gateList("    {}\n", strings.Replace(webhook, "sideEffects: None", "sideEffects: "+tc.sideEffects, 1)), nil, bin)
		if r.Code != tc.code {
			t.Errorf("sideEffects %s: exit %d, want %d\n%s%s", tc.sideEffects, r.Code, tc.code, r.Stdout, r.Stderr)
		}
		if want := `[api-validation] ValidatingWebhookConfiguration/shop-policy webhooks[0].sideEffects: Unsupported value: "Some"`; tc.code == 1 && !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
}
