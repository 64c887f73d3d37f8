package webhooks

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/apivalidation"
)

func digester(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/digester-mutating-webhook-configuration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func validate(t *testing.T, doc string) string {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("parsing the test object: %v", err)
	}
	v, ok := apivalidation.Validate(obj)
	if !ok {
		t.Fatalf("%s is not validated", obj["kind"])
	}
	if v == nil {
		return ""
	}
	if v.Decode != "" {
		return v.Decode
	}
	var lines []string
	for _, e := range v.Fields {
		lines = append(lines, e.Error())
	}
	return strings.Join(lines, "\n")
}

// TestWebhookConfigurations: k8s-digester's real MutatingWebhookConfiguration
// passes, as does a Validating one whose caBundle cert-manager has not
// injected yet (""); each broken the ways kube-apiserver refuses gets its
// message.
func TestWebhookConfigurations(t *testing.T) {
	mutating := digester(t)
	validating := strings.NewReplacer("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
		"  reinvocationPolicy: IfNeeded\n", "", "caBundle: Cg==", `caBundle: ""`).Replace(mutating)
	for _, tc := range []struct{ name, doc, want string }{
		{"k8s-digester's MutatingWebhookConfiguration", mutating, ""},
		{"a ValidatingWebhookConfiguration with an empty caBundle", validating, ""},
		{"sideEffects Some", strings.Replace(mutating, "sideEffects: None", "sideEffects: Some", 1),
			`webhooks[0].sideEffects: Unsupported value: "Some"`},
		{"no admissionReviewVersion the API server knows", strings.Replace(mutating, "  - v1\n  - v1beta1\n  clientConfig", "  - v2\n  clientConfig", 1),
			"webhooks[0].admissionReviewVersions: Invalid value"},
		{"webhook name not a qualified name", strings.Replace(validating, "- name: digester-webhook-service.digester-system.svc", "- name: digester", 1),
			`webhooks[0].name: Invalid value: "digester"`},
		{"timeout above 30 s", strings.Replace(mutating, "timeoutSeconds: 15", "timeoutSeconds: 45", 1),
			"webhooks[0].timeoutSeconds: Invalid value: 45"},
		{"operation outside the enum", strings.Replace(validating, "- CREATE\n", "- CREAT\n", 1),
			`webhooks[0].rules[0].operations[0]: Unsupported value: "CREAT"`},
		{"service path not absolute", strings.Replace(mutating, "path: /v1/mutate", "path: v1/mutate", 1),
			"webhooks[0].clientConfig.service.path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := validate(t, tc.doc)
			switch {
			case tc.want == "" && got != "":
				t.Errorf("rejected:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("want an error containing\n  %s\ngot\n  %s", tc.want, got)
			}
		})
	}
}
