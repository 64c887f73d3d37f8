package webhooks

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/apivalidation"
)

func obj(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("parsing test object: %v", err)
	}
	return m
}

// errorText renders a verdict as the API server's words, one per line.
func errorText(e *apivalidation.Error) string {
	if e == nil {
		return ""
	}
	if e.Decode != "" {
		return e.Decode
	}
	var lines []string
	for _, f := range e.Fields {
		lines = append(lines, f.Error())
	}
	return strings.Join(lines, "\n")
}

// widgetCRD is a CustomResourceDefinition as a project ships one: a
// structural schema with an x-kubernetes-validations rule (RULE).
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: RULE
              message: replicas must not exceed maxReplicas
            properties:
              replicas: {type: integer}
              maxReplicas: {type: integer}
              hosts:
                type: array
                items: {type: string}
`

func TestValidateCRD(t *testing.T) {
	for _, tc := range []struct{ name, rule, want string }{
		{"a rule that compiles", "'self.replicas <= self.maxReplicas'", ""},
		{"a rule that does not compile", "'self.replicas <= '", "x-kubernetes-validations[0].rule: Invalid value"},
		{"a rule on a field the schema lacks", "'self.nosuch > 1'", "undefined field 'nosuch'"},
		// hosts has no maxItems and its strings no maxLength: the API
		// server's estimate of this rule is far over the budget.
		{"a rule over the CEL cost budget", "'self.hosts.all(a, self.hosts.all(b, self.hosts.all(c, a.matches(b + c))))'", "exceeds budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(widgetCRD, "RULE", tc.rule, 1)
			verdict, ok := apivalidation.ValidateCRD(obj(t, doc))
			if !ok {
				t.Fatal("ValidateCRD does not handle a v1 CRD")
			}
			got := errorText(verdict)
			if tc.want == "" && got != "" {
				t.Fatalf("the API server accepts this CRD; got\n%s", got)
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("want %q in\n%s", tc.want, got)
			}
		})
	}
}

func TestValidateCRDChecksTheRest(t *testing.T) {
	doc := strings.Replace(widgetCRD, "RULE", "'true'", 1)
	for _, tc := range []struct{ name, from, to, want string }{
		{"name is not plural.group", "name: widgets.example.com", "name: widget.example.com", `must be spec.names.plural+"."+spec.group`},
		{"no storage version", "storage: true", "storage: false", "must have exactly one version marked as storage version"},
		{"not structural", "replicas: {type: integer}", "replicas: {}", "openAPIV3Schema.properties[spec].properties[replicas].type: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verdict, _ := apivalidation.ValidateCRD(obj(t, strings.Replace(doc, tc.from, tc.to, 1)))
			if got := errorText(verdict); !strings.Contains(got, tc.want) {
				t.Fatalf("want %q in\n%s", tc.want, got)
			}
		})
	}
	if _, ok := apivalidation.ValidateCRD(obj(t, strings.Replace(doc, "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", 1))); ok {
		t.Error("ValidateCRD handles a v1beta1 CRD, which no release serves")
	}
}
