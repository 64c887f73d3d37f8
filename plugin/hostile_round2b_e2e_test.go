package plugin

import (
	"strings"
	"testing"
)

// round2bCases are the hostile rows of issue 18 that outlived the first
// fixes: CRDs and admission policies the API server refuses to create
// (given to the gate or in the render), removed kinds whose types are gone
// from k8s.io/api, dot-directories under -f DIR -R, and a policy path
// that names a secret.
func round2bCases(t *testing.T) []hostileCase {
	t.Helper()
	pinned := strings.Replace(podLatest, "nginx:latest", "nginx@"+pinnedDigest, 1)
	hidden := strings.Replace(podLatest, "name: p}", "name: hidden}", 1)
	// A CRD as a project ships one, with its rule (RULE) and an unbounded
	// list of unbounded strings the over-budget rule walks three times.
	crd := func(rule string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n" +
			"  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n" +
			"        type: object\n        properties:\n          spec:\n            type: object\n            x-kubernetes-validations: [{rule: '" + rule + "'}]\n" +
			"            properties:\n              min: {type: integer}\n              max: {type: integer}\n              hosts: {type: array, items: {type: string}}\n"
	}
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: shop}\nspec: {min: 1, max: 2, hosts: [a]}\n"
	overBudget := crd("self.hosts.all(a, self.hosts.all(b, self.hosts.all(c, a.matches(b + c))))")
	uncompilable := crd("self.min <= ")
	vap := func(expr string) string {
		return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: no-latest}\nspec:\n  failurePolicy: Ignore\n" +
			"  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}\n  validations: [{expression: '" + expr + "'}]\n"
	}
	psp := "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: restricted}\nspec:\n  privileged: false\n  seLinux: {rule: RunAsAny}\n  runAsUser: {rule: MustRunAsNonRoot}\n  supplementalGroups: {rule: RunAsAny}\n  fsGroup: {rule: RunAsAny}\n  volumes: ['*']\n"
	const secret = "ghp_R0und2bS3cr3tT0ken"
	gateKust := "resources: [pod.yaml]\nvalidators: [gate.yaml]\n"
	gate := "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec: {policies: [token]}\n"
	return []hostileCase{
		// CRDs the API server refuses (apiextensions' own validation).
		{name: "--crd whose CEL rule is far over the cost budget", args: []string{"check", "-f", "widget.yaml", "--crd", "budget.yaml"},
			files: map[string]string{"widget.yaml": widget, "budget.yaml": overBudget}, code: 2,
			want: `budget.yaml: CustomResourceDefinition "widgets.example.com": the API server refuses it: spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget`, stdout: true},
		{name: "--crd whose CEL rule does not compile", args: []string{"check", "-f", "widget.yaml", "--crd", "crds"},
			files: map[string]string{"widget.yaml": widget, "crds/broken.yaml": uncompilable}, code: 2,
			want: `crds/broken.yaml: CustomResourceDefinition "widgets.example.com": the API server refuses it`, stdout: true},
		{name: "config schema.crds inline CRD over the cost budget", args: []string{"check", "-f", "widget.yaml", "--config", "gate.yaml"},
			files: map[string]string{"widget.yaml": widget, "gate.yaml": "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec:\n  schema:\n    crds:\n    - " +
				strings.ReplaceAll(strings.TrimSuffix(overBudget, "\n"), "\n", "\n      ") + "\n"}, code: 2, want: "schema.crds: CustomResourceDefinition \"widgets.example.com\": the API server refuses it", stdout: true},
		{name: "--policy file holding a CRD whose rule does not compile", args: []string{"check", "-f", "pod.yaml", "--policy", "policy.yaml"},
			files: map[string]string{"pod.yaml": pinned, "policy.yaml": strings.Replace(vap("true"), "  failurePolicy: Ignore\n", "  paramKind: {apiVersion: example.com/v1, kind: Widget}\n", 1) + "---\n" + uncompilable}, code: 2,
			want: `policy.yaml: CustomResourceDefinition "widgets.example.com": the API server refuses it`},
		{name: "render CRD whose CEL rule is over the cost budget", args: []string{"check", "-f", "render.yaml"},
			files: map[string]string{"render.yaml": overBudget}, code: 1, want: "CustomResourceDefinition/widgets.example.com\n  ERROR [api-validation]", stdout: true},
		{name: "render CRD whose CEL rule does not compile", args: []string{"check", "-f", "render.yaml"},
			files: map[string]string{"render.yaml": uncompilable + "---\n" + pinned}, code: 1, want: "x-kubernetes-validations[0].rule: Invalid value", stdout: true},
		// A policy the API server would never store, under failurePolicy
		// Ignore, in the render (its --policy twin is a verdictCases row).
		{name: "render VAP with an uncompilable expression under failurePolicy: Ignore", args: []string{"check", "-f", "render.yaml"},
			files: map[string]string{"render.yaml": vap("object.spec.containers.all(c, ") + "---\n" + pinned}, code: 1,
			want: "ValidatingAdmissionPolicy/no-latest\n  ERROR [api-validation] spec.validations[0].expression", stdout: true},
		{name: "render VAP with an uncompilable expression, --policies-from-render", args: []string{"check", "-f", "render.yaml", "--policies-from-render"},
			files: map[string]string{"render.yaml": vap("object.spec.containers.all(c, ") + "---\n" + pinned}, code: 3,
			want: `ValidatingAdmissionPolicy "no-latest": the API server refuses it: spec.validations[0].expression`, stdout: true},
		// Removed kinds whose types k8s.io/api dropped.
		{name: "PodSecurityPolicy of policy v1beta1 is api-removed", args: []string{"check", "-f", "psp.yaml"},
			files: map[string]string{"psp.yaml": psp}, code: 1, want: "PodSecurityPolicy/restricted\n  ERROR [api-removed]: policy/v1beta1 PodSecurityPolicy is no longer served since Kubernetes 1.25", stdout: true},
		{name: "HorizontalPodAutoscaler of autoscaling v2beta2 is api-removed", args: []string{"check", "-f", "hpa.yaml"},
			files: map[string]string{"hpa.yaml": "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, maxReplicas: 3}\n"},
			code:  1, want: "use autoscaling/v2 HorizontalPodAutoscaler", stdout: true},
		// -f DIR -R reads what kubectl apply -f DIR -R applies.
		{name: "-f DIR -R reads a .dot/ directory", args: []string{"check", "-f", "app", "-R"},
			files: map[string]string{"app/pod.yaml": pinned, "app/.dot/pod.yaml": hidden}, code: 1, want: "app/.dot/pod.yaml", stdout: true},
		{name: "-f DIR reads a .hidden.yaml", args: []string{"check", "-f", "app"},
			files: map[string]string{"app/pod.yaml": pinned, "app/.hidden.yaml": hidden}, code: 1, want: "app/.hidden.yaml", stdout: true},
		// A policy path naming a secret: the error names the file only.
		{name: "--policy names a one-line token file", args: []string{"check", "-f", "pod.yaml", "--policy", "token"},
			files: map[string]string{"pod.yaml": pinned, "token": secret + "\n"}, code: 2, want: "token: decode object: the document at line 1 is a scalar (plain text), not an object", reject: "ghp_"},
		{name: "in-tree Gate policy names a token file in the checkout", args: []string{"check", "-k", "."},
			files: map[string]string{"kustomization.yaml": gateKust, "pod.yaml": pinned, "gate.yaml": gate, "token": secret + "\n"}, code: 2, want: "is a scalar (plain text), not an object", reject: "ghp_", stdout: true},
	}
}
