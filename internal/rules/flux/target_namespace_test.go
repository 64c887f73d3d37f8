package flux

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

// apps is a Flux Kustomization as `flux create kustomization` writes it;
// target is its targetNamespace line (or "").
func apps(target string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps/prod
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
` + target
}

// render is what kustomize-controller builds from ./apps/prod.
const render = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: ghcr.io/example/web:1.4.2}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: web-reader}
rules: []
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: nested, namespace: flux-system}
spec: {path: ./x, sourceRef: {kind: GitRepository, name: flux-system}}
`

// rendered hands the rule the render of the input's Kustomization, with
// its objects in namespace ns ("" for none).
func rendered(t *testing.T, ns string) func(*rules.Context) {
	text := strings.ReplaceAll(render, "namespace: NS", "namespace: "+ns)
	if ns == "" {
		text = strings.ReplaceAll(render, ", namespace: NS", "")
	}
	objs := ruletest.Parse(t, text)
	return func(c *rules.Context) {
		for _, r := range c.Resources {
			if IsKustomization(r) {
				c.Apps = append(c.Apps, argo.AppSource{App: r, Index: -1, Path: "./apps/prod", Resources: objs})
			}
		}
	}
}

func TestTargetNamespace(t *testing.T) {
	ruletest.Run(t, TargetNamespace, []ruletest.Case{
		{Name: "targetNamespace and the render agree", Input: apps("  targetNamespace: shop\n"), Setup: rendered(t, "shop")},
		{Name: "no targetNamespace, objects carry their own", Input: apps(""), Setup: rendered(t, "shop")},
		{Name: "no targetNamespace, objects set none", Input: apps(""), Setup: rendered(t, ""),
			Want: []string{`spec.targetNamespace: 2 namespaced objects of its path ./apps/prod (Deployment/web, Service/web) set no namespace either`}},
		{Name: "targetNamespace elsewhere", Input: apps("  targetNamespace: shop\n"), Setup: rendered(t, "payments"),
			Want: []string{`spec.targetNamespace: targetNamespace "shop", but 2 objects of its path ./apps/prod render into namespace "payments"`}},
		{Name: "not rendered: nothing to judge", Input: apps("")},
		{Name: "a kustomize Kustomization is not Flux's", Input: "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata: {name: apps}\n", Setup: rendered(t, "")},
	})
}

func TestMoveTargetFires(t *testing.T) {
	for _, c := range []struct{ target, ns string }{{"  targetNamespace: shop\n", "shop"}, {"", "shop"}} {
		in := ruletest.Parse(t, apps(c.target))
		ctx := &rules.Context{Resources: in}
		rendered(t, c.ns)(ctx)
		if got := ruletest.CheckResources(TargetNamespace, in, nil, func(x *rules.Context) { x.Apps = ctx.Apps }); len(got) != 0 {
			t.Fatalf("the baseline fires: %v", got)
		}
		s := &rules.Subject{Resources: []*yaml.RNode{in[0].Copy()}, Apps: ctx.Apps}
		if !moveTarget(s) {
			t.Fatal("the mutant does not apply")
		}
		if got := ruletest.CheckResources(TargetNamespace, s.Resources, nil, func(x *rules.Context) { x.Apps = s.Apps }); len(got) != 1 {
			t.Errorf("the mutant is not caught: %v\n%s", got, s.Resources[0].MustString())
		}
	}
}

func TestNotRendered(t *testing.T) {
	hr := "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: flux-system}\nspec: {chart: {spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: flux-system}}}}\n"
	ruletest.Run(t, NotRendered, []ruletest.Case{
		{Name: "rendered", Input: apps(""), Setup: rendered(t, "shop")},
		{Name: "no --apps-root", Input: apps("") + "---\n" + hr, Want: []string{"spec: was not rendered", "spec: was not rendered"}},
		{Name: "handled elsewhere", Input: hr, Setup: func(c *rules.Context) {
			c.Apps = []argo.AppSource{{App: ruletest.Parse(t, hr)[0], Index: -1, Skipped: "handled with its first copy"}}
		}},
	})
}

// TestNotRenderedIsNoVerdict: what the gate did not render is exit 3,
// whatever severity the rule is given; an exclusion in the trusted config
// is listed as info instead.
func TestNotRenderedIsNoVerdict(t *testing.T) {
	hr := "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web, namespace: flux-system}\nspec: {chart: {spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: flux-system}}}}\n"
	lowered := config.Default()
	lowered.Rules = map[string]string{"flux-not-rendered": "off"}
	got := ruletest.CheckResources(NotRendered, ruletest.Parse(t, hr), lowered, nil)
	if len(got) != 1 || !got[0].NoVerdict || got[0].Severity != finding.SeverityError {
		t.Errorf("rule off: %+v, want one no-verdict error", got)
	}
	for _, entry := range []string{"web", "flux-system/web"} {
		cfg := config.Default()
		cfg.ArgoCD.Exclude = []string{entry}
		got := ruletest.CheckResources(NotRendered, ruletest.Parse(t, hr), cfg, nil)
		if len(got) != 1 || got[0].NoVerdict || got[0].Severity != finding.SeverityInfo || !strings.Contains(got[0].Message, "excluded by spec.argocd.exclude") {
			t.Errorf("excluded as %s: %+v", entry, got)
		}
	}
}
