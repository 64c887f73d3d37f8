package plugin

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// localPolicies is a kustomize Component holding a ValidatingAdmissionPolicy
// and its binding as local-config objects: never deployed, handed to KRM
// functions.
const localPolicies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-replicas
  annotations: {config.kubernetes.io/local-config: "true"}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - {expression: "object.spec.replicas <= 2", message: "at most 2 replicas"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-replicas
  annotations: {config.kubernetes.io/local-config: "true"}
spec: {policyName: max-replicas, validationActions: [Deny]}
`

// policyTree writes base (a Deployment with n replicas), the policies
// Component, and an overlay that includes the Component and lists the gate
// function under validators: with gateSpec.
func policyTree(t *testing.T, n, gateSpec string) string {
	fnBin := testutil.Bin(t, "gate-fn")
	return testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"base/kustomization.yaml": "resources: [web.yaml]\n",
		"base/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: ` + n + `
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "ghcr.io/shop/web@sha256:4315c8fd5a82533f56a83922bc1d5a2cff2b1f1e76117f66673abbcffd6c9fff"}
`,
		"policies/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [vap.yaml]\n",
		"policies/vap.yaml":           localPolicies,
		"overlay/kustomization.yaml":  "resources: [../base]\ncomponents: [../policies]\nvalidators: [gate.yaml]\n",
		"overlay/gate.yaml": "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata:\n  name: gate\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " +
			fnBin + "\nspec:\n" + gateSpec,
		"plain/kustomization.yaml": "resources: [../base]\n",
	})
}

// TestE2ELocalConfigPoliciesBothShells: policies kept in the render as
// local-config objects (a Component) with spec.policiesFromRender: true in
// the overlay's Gate are evaluated by check -k and by the function inside
// kustomize alike: red on 3 replicas, green on 2, and neither emits them.
func TestE2ELocalConfigPoliciesBothShells(t *testing.T) {
	kustomize := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	for _, c := range []struct {
		replicas string
		code     int
	}{{"3", 1}, {"2", 0}} {
		dir := policyTree(t, c.replicas, "  policiesFromRender: true\n")
		plugin := runGate(t, dir, "check", "-k", "overlay")
		if plugin.Code != c.code || (c.code == 1) != strings.Contains(plugin.Stdout, "at most 2 replicas") {
			t.Errorf("check -k, %s replicas: exit %d, want %d\n%s%s", c.replicas, plugin.Code, c.code, plugin.Stdout, plugin.Stderr)
		}
		fn := testutil.Run(t, dir, "", nil, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", "overlay")
		if (fn.Code == 0) != (c.code == 0) || (c.code == 1) != strings.Contains(fn.Stderr, "at most 2 replicas") {
			t.Errorf("kustomize build with the function, %s replicas: exit %d, want red=%v\n%s", c.replicas, fn.Code, c.code == 1, fn.Stderr)
		}
		if c.code == 0 && strings.Contains(fn.Stdout, "ValidatingAdmissionPolicy") {
			t.Errorf("kustomize emitted the local-config policy:\n%s", fn.Stdout)
		}
		pin := runGate(t, dir, "pin", "-k", "overlay", "--digest", "off")
		if c.code == 0 && (pin.Code != 0 || strings.Contains(pin.Stdout, "ValidatingAdmissionPolicy") || !strings.Contains(pin.Stdout, "kind: Deployment")) {
			t.Errorf("pin -k must print the render without the local-config policy: exit %d\n%s%s", pin.Code, pin.Stdout, pin.Stderr)
		}
	}
}

// TestE2EPolicyRoutesInThePlugin: --policies-from-render reads the
// local-config policies of a render the overlay's Gate does not ask about;
// on a render that holds none it warns naming the flag; a policy written
// inline in --config is evaluated as a file is.
func TestE2EPolicyRoutesInThePlugin(t *testing.T) {
	red, green := policyTree(t, "3", "  {}\n"), policyTree(t, "2", "  {}\n")
	inline := "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: trusted}\nspec:\n  policies:\n" +
		"  - {apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicy, metadata: {name: max-replicas}, spec: {matchConstraints: {resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]}, validations: [{expression: 'object.spec.replicas <= 2', message: at most 2 replicas}]}}\n" +
		"  - {apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicyBinding, metadata: {name: max-replicas}, spec: {policyName: max-replicas, validationActions: [Deny]}}\n"
	testutil.WriteFiles(t, red, map[string]string{"trusted.yaml": inline})
	testutil.WriteFiles(t, green, map[string]string{"trusted.yaml": inline})
	cases := []struct {
		name string
		dir  string
		args []string
		code int
		want string
	}{
		{"from render, red", red, []string{"check", "-k", "overlay", "--policies-from-render"}, 1, "at most 2 replicas"},
		{"from render, green", green, []string{"check", "-k", "overlay", "--policies-from-render"}, 0, "PASS"},
		{"not asked: the local-config policy is not evaluated", red, []string{"check", "-k", "overlay"}, 0, "PASS"},
		{"from render, none there: a warning naming the flag", red, []string{"check", "-k", "plain", "--policies-from-render"}, 0, "--policies-from-render / spec.policiesFromRender: the render holds no ValidatingAdmissionPolicy"},
		{"... which --fail-on warning fails", red, []string{"check", "-k", "plain", "--policies-from-render", "--fail-on", "warning"}, 1, "the render holds no ValidatingAdmissionPolicy"},
		{"inline in --config, red", red, []string{"check", "-k", "plain", "--config", "trusted.yaml"}, 1, "at most 2 replicas"},
		{"inline in --config, green", green, []string{"check", "-k", "plain", "--config", "trusted.yaml"}, 0, "PASS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runGate(t, c.dir, c.args...)
			if r.Code != c.code || !strings.Contains(r.Stdout+r.Stderr, c.want) {
				t.Errorf("exit %d, want %d saying %q\n%s%s", r.Code, c.code, c.want, r.Stdout, r.Stderr)
			}
		})
	}
}
