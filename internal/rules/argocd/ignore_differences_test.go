package argocd_test

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

// appWithIgnore is an Application whose spec.ignoreDifferences is entries.
func appWithIgnore(entries string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  source: {repoURL: https://github.com/example/shop.git, path: overlays/prod}
  destination: {namespace: shop-prod}
  ignoreDifferences:
` + entries
}

func TestIgnoreDifferencesApplication(t *testing.T) {
	cases := []struct {
		name, entries string
		want          []string // field paths of the findings
	}{
		{"replicas of every Deployment (HPA)", "  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}\n", nil},
		{"caBundle of every webhook, pointer and jq", "  - group: admissionregistration.k8s.io\n    kind: MutatingWebhookConfiguration\n    jsonPointers: [/webhooks/0/clientConfig/caBundle]\n    jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle']\n", nil},
		{"the image of every Deployment", "  - {kind: Deployment, jsonPointers: [/spec/template/spec/containers/0/image]}\n",
			[]string{"spec.ignoreDifferences[0].jsonPointers[0]"}},
		{"the image of one named Deployment", "  - {kind: Deployment, name: web, jsonPointers: [/spec/template/spec/containers/0/image]}\n", nil},
		{"the whole spec, even of a named object", "  - {kind: Deployment, name: web, jsonPointers: [/spec]}\n",
			[]string{"spec.ignoreDifferences[0].jsonPointers[0]"}},
		{"whole-object pointers", "  - {kind: Deployment, name: web, jsonPointers: [/, /metadata, /spec/template, /spec/template/]}\n",
			[]string{"jsonPointers[0]", "jsonPointers[1]", "jsonPointers[2]", "jsonPointers[3]"}},
		{"whole-object jq paths", "  - kind: Deployment\n    name: web\n    jqPathExpressions: ['.', '.spec', '.metadata', '.spec.template', '.spec[]', '..|.image?']\n",
			[]string{"jqPathExpressions[0]", "jqPathExpressions[1]", "jqPathExpressions[2]", "jqPathExpressions[3]", "jqPathExpressions[4]", "jqPathExpressions[5]"}},
		{"a jq select on every Deployment is not provably narrow", "  - kind: Deployment\n    jqPathExpressions: ['.spec.template.spec.initContainers[] | select(.name == \"istio-init\")']\n",
			[]string{"jqPathExpressions[0]"}},
		{"the same select on a named Deployment", "  - kind: Deployment\n    name: web\n    jqPathExpressions: ['.spec.template.spec.initContainers[] | select(.name == \"istio-init\")']\n", nil},
		{"a key of every ConfigMap (Argo CD's docs example)", "  - kind: ConfigMap\n    jqPathExpressions: ['.data[\"config.yaml\"]']\n",
			[]string{"jqPathExpressions[0]"}},
		{"human managers", "  - {kind: Deployment, name: web, managedFieldsManagers: [kubectl-edit, kubectl-patch, kubectl-client-side-apply, kubectl, kube-controller-manager]}\n",
			[]string{"managedFieldsManagers[0]", "managedFieldsManagers[1]", "managedFieldsManagers[2]", "managedFieldsManagers[3]"}},
		{"no kind", "  - {group: apps, jsonPointers: [/spec/replicas]}\n", []string{"spec.ignoreDifferences[0].kind"}},
		{"every kind, replicas only", "  - {group: '*', kind: '*', jsonPointers: [/spec/replicas]}\n", nil},
		{"every kind named web, a label", "  - {group: '*', kind: '*', name: web, jsonPointers: [/metadata/labels/team]}\n", []string{"jsonPointers[0]"}},
		// argocd-autopilot writes this entry on the Applications it generates
		// (reduced by hand; autopilot's source is not vendored here).
		{"status of every Application (argocd-autopilot)", "  - {group: argoproj.io, kind: Application, jsonPointers: [/status]}\n", nil},
		{"children of status, pointer and jq, on every kind", "  - group: '*'\n    kind: '*'\n    jsonPointers: [/status/sync, /status/conditions/0]\n    jqPathExpressions: ['.status.health', '.status.conditions[]?']\n", nil},
		{"status beside spec: spec is still whole", "  - {group: argoproj.io, kind: Application, jsonPointers: [/status, /spec]}\n",
			[]string{"spec.ignoreDifferences[0].jsonPointers[1]"}},
		{"a field only named like status", "  - {kind: Deployment, jsonPointers: [/statusReport, /spec/status]}\n",
			[]string{"jsonPointers[0]", "jsonPointers[1]"}},
		{"a jq select under status is not a plain path", "  - kind: Deployment\n    jqPathExpressions: ['.status | select(.x)']\n",
			[]string{"jqPathExpressions[0]"}},
		// jq is read by what Argo CD's del(EXPR) removes, not by its spelling.
		{"jq forms that hide the whole spec or metadata of a named Deployment", "  - group: apps\n    kind: Deployment\n    name: web\n    namespace: shop\n    jqPathExpressions: ['(.spec)', '.status, .metadata', '.spec | .template', 'getpath([\"spec\"])', '.[\"sp\" + \"ec\"]', '.spec,.metadata', '.a) | del(.spec']\n",
			[]string{"jqPathExpressions[0]", "jqPathExpressions[1]", "jqPathExpressions[2]", "jqPathExpressions[3]", "jqPathExpressions[4]", "jqPathExpressions[5]", "jqPathExpressions[6]"}},
		{"the image of every container of a named Deployment", "  - {group: apps, kind: Deployment, name: web, jqPathExpressions: ['.spec.template.spec.containers[].image']}\n",
			[]string{"jqPathExpressions[0]"}},
		{"narrow jq filters on named objects (caBundle, istio-init, a Route's host, restartedAt)", "  - group: admissionregistration.k8s.io\n    kind: MutatingWebhookConfiguration\n    name: istio-sidecar-injector\n    jqPathExpressions: ['.webhooks[] | select(.name == \"sidecar-injector.istio.io\") | .clientConfig.caBundle']\n" +
			"  - group: apps\n    kind: Deployment\n    name: web\n    jqPathExpressions: ['.spec.template.spec.initContainers[] | select(.name == \"istio-init\")', '.spec.template.spec.containers[] | select(.name == \"istio-proxy\") | .image', '.spec.template.metadata.annotations[\"kubectl.kubernetes.io/restartedAt\"]']\n" +
			"  - group: route.openshift.io\n    kind: Route\n    name: web\n    jsonPointers: [/spec/host]\n    jqPathExpressions: ['.spec.host']\n", nil},
		{"a jq expression Argo CD cannot parse (its own test's missing quote)", "  - kind: Deployment\n    name: web\n    jqPathExpressions: ['.spec.template.spec.containers[] | select(.name == \"missing-quote)']\n",
			[]string{"jqPathExpressions[0]"}},
		{"jq the gate does not evaluate, or that errors, on a named object", "  - kind: Deployment\n    name: web\n    jqPathExpressions: ['until(false; .)', '.metadata.namespace == \"shop\"']\n",
			[]string{"jqPathExpressions[0]", "jqPathExpressions[1]"}},
		{"every kind named x, controller-manager fields (Argo CD's docs)", "  - {group: '*', kind: '*', name: my-deployment, managedFieldsManagers: [kube-controller-manager]}\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := check(t, "argocd-ignore-differences", ruletest.Parse(t, appWithIgnore(c.entries)), nil, nil)
			if len(got) != len(c.want) {
				t.Fatalf("%d findings, want %d:\n%s", len(got), len(c.want), messages(got))
			}
			for i, w := range c.want {
				if !strings.HasSuffix(got[i].Field.Path, w) || got[i].ResourceRef.Name != "shop" {
					t.Errorf("finding %d at %s %v, want …%s on the Application", i, got[i].Field.Path, got[i].ResourceRef, w)
				}
			}
		})
	}
}

func TestIgnoreDifferencesAllowListIsConfigurable(t *testing.T) {
	input := ruletest.Parse(t, appWithIgnore("  - {kind: Deployment, jsonPointers: [/spec/template/metadata/annotations, /spec/replicas]}\n"))
	cfg := config.Default()
	cfg.ArgoCD.IgnoreDifferencesAllowed = []string{"/spec/template/metadata/annotations"}
	got := check(t, "argocd-ignore-differences", input, nil, cfg)
	// The configured list replaces the default: replicas are no longer allowed.
	if len(got) != 1 || got[0].Field.CurrentValue != "/spec/replicas" {
		t.Fatalf("got %s, want only /spec/replicas", messages(got))
	}
	cfg.ArgoCD.IgnoreDifferencesAllowed = []string{"/spec/*/metadata/**", "/spec/replicas"}
	if got := check(t, "argocd-ignore-differences", input, nil, cfg); len(got) != 0 {
		t.Fatalf("globbed allow-list: got %s", messages(got))
	}
}

func TestIgnoreDifferencesArgoCDConfigMap(t *testing.T) {
	cm := func(data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata:\n" + data
	}
	cases := []struct {
		name, input string
		want        []string
	}{
		{"replicas everywhere, controller fields", cm("  resource.customizations.ignoreDifferences.all: |\n    jsonPointers: [/spec/replicas]\n    managedFieldsManagers: [kube-controller-manager]\n"), nil},
		{"a label on every object of every kind", cm("  resource.customizations.ignoreDifferences.all: |\n    jsonPointers: [/metadata/labels]\n"),
			[]string{"data[resource.customizations.ignoreDifferences.all].jsonPointers[0]"}},
		{"the pod template of every Deployment", cm("  resource.customizations.ignoreDifferences.apps_Deployment: |\n    jqPathExpressions: [.spec.template]\n"),
			[]string{"data[resource.customizations.ignoreDifferences.apps_Deployment].jqPathExpressions[0]"}},
		{"a human manager on core Services", cm("  resource.customizations.ignoreDifferences.Service: |\n    managedFieldsManagers: [kubectl-edit]\n"),
			[]string{"managedFieldsManagers[0]"}},
		{"a value that does not parse", cm("  resource.customizations.ignoreDifferences.all: \"jsonPointers: [\"\n"),
			[]string{"data[resource.customizations.ignoreDifferences.all]"}},
		{"the older resource.customizations key", cm("  resource.customizations: |\n    apps/Deployment:\n      ignoreDifferences: |\n        jsonPointers: [/spec]\n"),
			[]string{"data[resource.customizations].apps/Deployment.ignoreDifferences.jsonPointers[0]"}},
		{"other keys and ConfigMaps are not read", cm("  resource.customizations.ignoreResourceUpdates.all: |\n    jsonPointers: [/status]\n") +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata:\n  resource.customizations.ignoreDifferences.all: |\n    jsonPointers: [/spec]\n", nil},
		{"an ApplicationSet's template", "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n      ignoreDifferences: [{kind: Secret, jsonPointers: [/data]}]\n",
			[]string{"spec.template.spec.ignoreDifferences[0].jsonPointers[0]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := check(t, "argocd-ignore-differences", ruletest.Parse(t, c.input), nil, nil)
			if len(got) != len(c.want) {
				t.Fatalf("%d findings, want %d:\n%s", len(got), len(c.want), messages(got))
			}
			for i, w := range c.want {
				if !strings.HasSuffix(got[i].Field.Path, w) {
					t.Errorf("finding %d at %s, want …%s", i, got[i].Field.Path, w)
				}
			}
		})
	}
}

// argoCDOperator is an ArgoCD resource of argocd-operator (apiVersion
// argoproj.io/v1beta1 or v1alpha1) with spec.
func argoCDOperator(apiVersion, spec string) string {
	return "apiVersion: argoproj.io/" + apiVersion + "\nkind: ArgoCD\nmetadata: {name: argocd, namespace: openshift-gitops}\nspec:\n" + spec
}

// TestIgnoreDifferencesArgoCDOperator: the operator writes the ArgoCD
// resource's resourceIgnoreDifferences, resourceCustomizations and
// extraConfig into argocd-cm, so they are judged as argocd-cm's keys are.
func TestIgnoreDifferencesArgoCDOperator(t *testing.T) {
	// The shape of argocd-operator's documented example: replicas of every
	// Deployment, caBundles of webhooks, controller-manager fields.
	const documented = `  resourceIgnoreDifferences:
    all:
      jsonPointers: [/spec/replicas]
      managedFieldsManagers: [kube-controller-manager]
    resourceIdentifiers:
      - group: admissionregistration.k8s.io
        kind: MutatingWebhookConfiguration
        customization:
          jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle']
      - group: apps
        kind: Deployment
        customization:
          jsonPointers: [/spec/replicas]
  resourceHealthChecks:
    - group: certmanager.k8s.io
      kind: Certificate
      check: |
        hs = {status = "Healthy"}
        return hs
`
	cases := []struct {
		name, input string
		want        []string
	}{
		{"v1beta1, documented example", argoCDOperator("v1beta1", documented), nil},
		{"v1alpha1, documented example", argoCDOperator("v1alpha1", documented), nil},
		{"all hides labels of every object", argoCDOperator("v1beta1", "  resourceIgnoreDifferences:\n    all:\n      jsonPointers: [/metadata/labels]\n"),
			[]string{"spec.resourceIgnoreDifferences.all.jsonPointers[0]"}},
		{"the pod template of every Deployment", argoCDOperator("v1beta1", "  resourceIgnoreDifferences:\n    resourceIdentifiers:\n      - group: apps\n        kind: Deployment\n        customization:\n          jqPathExpressions: [.spec.template]\n"),
			[]string{"spec.resourceIgnoreDifferences.resourceIdentifiers[0].customization.jqPathExpressions[0]"}},
		{"images of every StatefulSet", argoCDOperator("v1alpha1", "  resourceIgnoreDifferences:\n    resourceIdentifiers:\n      - group: apps\n        kind: StatefulSet\n        customization:\n          jsonPointers: [/spec/replicas, /spec/template/spec/containers/0/image]\n"),
			[]string{"resourceIdentifiers[0].customization.jsonPointers[1]"}},
		{"a human manager", argoCDOperator("v1beta1", "  resourceIgnoreDifferences:\n    resourceIdentifiers:\n      - kind: Service\n        customization:\n          managedFieldsManagers: [kubectl-edit]\n"),
			[]string{"resourceIdentifiers[0].customization.managedFieldsManagers[0]"}},
		{"no kind", argoCDOperator("v1beta1", "  resourceIgnoreDifferences:\n    resourceIdentifiers:\n      - group: apps\n        customization:\n          jsonPointers: [/spec/replicas]\n"),
			[]string{"spec.resourceIgnoreDifferences.resourceIdentifiers[0].kind"}},
		{"v1alpha1's older resourceCustomizations string", argoCDOperator("v1alpha1", "  resourceCustomizations: |\n    apps/Deployment:\n      ignoreDifferences: |\n        jsonPointers:\n        - /spec\n    certmanager.k8s.io/Certificate:\n      health.lua: |\n        return {status = \"Healthy\"}\n"),
			[]string{"spec.resourceCustomizations.apps/Deployment.ignoreDifferences.jsonPointers[0]"}},
		{"resourceCustomizations that does not parse", argoCDOperator("v1alpha1", "  resourceCustomizations: \"apps/Deployment: [\"\n"),
			[]string{"spec.resourceCustomizations"}},
		{"extraConfig sets an argocd-cm key", argoCDOperator("v1beta1", "  extraConfig:\n    resource.customizations.ignoreDifferences.all: |\n      jsonPointers: [/spec]\n    admin.enabled: \"false\"\n"),
			[]string{"spec.extraConfig[resource.customizations.ignoreDifferences.all].jsonPointers[0]"}},
		{"an ArgoCD kind of another group is not read", "apiVersion: example.com/v1\nkind: ArgoCD\nmetadata: {name: x}\nspec:\n  resourceIgnoreDifferences:\n    all: {jsonPointers: [/spec]}\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := check(t, "argocd-ignore-differences", ruletest.Parse(t, c.input), nil, nil)
			if len(got) != len(c.want) {
				t.Fatalf("%d findings, want %d:\n%s", len(got), len(c.want), messages(got))
			}
			for i, w := range c.want {
				if !strings.HasSuffix(got[i].Field.Path, w) || got[i].ResourceRef.Kind != "ArgoCD" {
					t.Errorf("finding %d at %s %v, want …%s on the ArgoCD resource", i, got[i].Field.Path, got[i].ResourceRef, w)
				}
			}
		})
	}
}
