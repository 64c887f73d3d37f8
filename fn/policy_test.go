package fn_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/fn"
)

// maxReplicas is a ValidatingAdmissionPolicy and its Deny binding, as
// list items indented by indent.
func maxReplicas(indent, annotations string) string {
	doc := `- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingAdmissionPolicy
  metadata: {name: max-replicas` + annotations + `}
  spec:
    matchConstraints:
      resourceRules:
      - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
    validations:
    - {expression: "object.spec.replicas <= 2", message: "at most 2 replicas"}
- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingAdmissionPolicyBinding
  metadata: {name: max-replicas` + annotations + `}
  spec: {policyName: max-replicas, validationActions: [Deny]}
`
	var b strings.Builder
	for _, line := range strings.SplitAfter(doc, "\n") {
		if line != "" {
			b.WriteString(indent + line)
		}
	}
	return b.String()
}

// replicas is a digest-pinned Deployment with n replicas.
func replicas(n string) string {
	return strings.Replace(pinnedImage, "  spec:\n    selector:", "  spec:\n    replicas: "+n+"\n    selector:", 1)
}

const localConfig = `, annotations: {config.kubernetes.io/local-config: "true"}`

// TestFunctionEvaluatesPolicies: the policy routes of check -k, inside
// kustomize — spec.policies written inline, and spec.policiesFromRender
// with the render's (local-config) policies — each red on a Deployment the
// policy denies and green on one it admits.
func TestFunctionEvaluatesPolicies(t *testing.T) {
	inline := "    policies:\n" + maxReplicas("    ", "")
	cases := []struct {
		name, spec, items string
		fails             bool
		says              string
	}{
		{"inline policy denies", inline, replicas("3"), true, "ERROR [policy] Deployment/web (ns shop): ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request: at most 2 replicas"},
		{"inline policy admits", inline, replicas("2"), false, ""},
		{"local-config policy of the render denies", "    policiesFromRender: true\n", maxReplicas("", localConfig) + replicas("3"), true, "denied request: at most 2 replicas"},
		{"local-config policy of the render admits", "    policiesFromRender: true\n", maxReplicas("", localConfig) + replicas("2"), false, ""},
		{"render policies count only when asked", "    {}\n", maxReplicas("", localConfig) + replicas("3"), false, ""},
		{"asked, but the render holds none: a warning naming the field", "    policiesFromRender: true\n", replicas("3"), false,
			"WARNING [policy]: --policies-from-render / spec.policiesFromRender: the render holds no ValidatingAdmissionPolicy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := fn.Run(context.Background(), strings.NewReader(gateList(c.spec, c.items)), &out, &errOut, "test")
			if got := errors.Is(err, fn.ErrFindings); got != c.fails || (err != nil && !got) {
				t.Fatalf("err = %v, want fails=%v\nstderr:\n%s", err, c.fails, errOut.String())
			}
			if !strings.Contains(errOut.String(), c.says) {
				t.Errorf("stderr lacks %q:\n%s", c.says, errOut.String())
			}
			if c.says == "" && strings.Contains(errOut.String(), "[policy]") {
				t.Errorf("want no policy finding:\n%s", errOut.String())
			}
		})
	}
}

// widget is a CustomResourceDefinition, inline in spec.schema.crds.
const widget = `    schema:
      crds:
      - apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata: {name: widgets.example.com}
        spec:
          group: example.com
          names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
          scope: Namespaced
          versions:
          - name: v1
            served: true
            storage: true
            schema:
              openAPIV3Schema:
                type: object
                properties:
                  spec:
                    type: object
                    properties:
                      size: {type: integer, maximum: 10}
`

func widgetOf(size string) string {
	return "- apiVersion: example.com/v1\n  kind: Widget\n  metadata: {name: w, namespace: shop}\n  spec: {size: " + size + "}\n"
}

// TestFunctionInlineCRDs: CRDs written inline in spec.schema.crds validate
// custom resources as --crd does; a path is refused (the function reads no
// files), never a thinner schema set.
func TestFunctionInlineCRDs(t *testing.T) {
	run := func(spec, items string) (error, string) {
		var out, errOut bytes.Buffer
		err := fn.Run(context.Background(), strings.NewReader(gateList(spec, items)), &out, &errOut, "test")
		return err, errOut.String()
	}
	if err, stderr := run(widget, widgetOf("3")); err != nil {
		t.Fatalf("a valid Widget: %v\n%s", err, stderr)
	}
	err, stderr := run(widget, widgetOf("30"))
	if !errors.Is(err, fn.ErrFindings) || !strings.Contains(stderr, "ERROR [schema] Widget/w (ns shop)") || !strings.Contains(stderr, "spec.size") {
		t.Errorf("a Widget over the CRD's maximum: err %v\n%s", err, stderr)
	}
	for _, spec := range []string{"    schema: {crds: [crds/]}\n", "    policies: [policies/]\n"} {
		err, stderr := run(spec, pinnedImage)
		if err == nil || errors.Is(err, fn.ErrFindings) || !strings.Contains(stderr, "is a path: files are read by the kubectl plugin only") {
			t.Errorf("%s: want no verdict naming the path, got %v\n%s", strings.TrimSpace(spec), err, stderr)
		}
	}
}
