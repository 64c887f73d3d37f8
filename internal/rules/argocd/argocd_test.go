package argocd_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

// check runs one rule the way the engine does.
func check(t *testing.T, id string, resources []*yaml.RNode, apps []argo.AppSource, cfg *config.Spec) []finding.Finding {
	t.Helper()
	r, ok := all.Lookup(id)
	if !ok {
		t.Fatalf("rule %s is not registered", id)
	}
	return ruletest.CheckResources(r, resources, cfg, func(c *rules.Context) { c.Apps = apps })
}

const prodApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop-prod, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://github.com/example/shop.git, path: overlays/prod, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: shop-prod}
`

const multiApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  sources:
    - {repoURL: https://github.com/example/shop.git, path: overlays/prod}
    - {repoURL: https://github.com/example/shop.git, path: platform}
    - {repoURL: https://github.com/example/shop.git, ref: values}
  destination: {namespace: shop-prod}
`

const prodRender = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop-prod}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop-prod}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop-prod}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: shop-reader, namespace: ignored}
`

// authReader is the RoleBinding an aggregated API server needs in
// kube-system, whatever namespace it runs in.
const authReader = `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: web-auth-reader, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: extension-apiserver-authentication-reader}
subjects: [{kind: ServiceAccount, name: web, namespace: shop-prod}]
`

func appSource(t *testing.T, app *yaml.RNode, index int, path, render string) argo.AppSource {
	t.Helper()
	var res []*yaml.RNode
	if render != "" {
		res = ruletest.Parse(t, render)
	}
	return argo.AppSource{App: app, Index: index, Path: path, Resources: res}
}

func TestDestinationNamespace(t *testing.T) {
	cases := []struct {
		name, app string
		sources   map[int]string // source index → render
		want      []string       // substrings, one per finding
	}{
		{"matches", prodApp, map[int]string{-1: prodRender}, nil},
		{"render into another namespace", prodApp, map[int]string{-1: strings.ReplaceAll(prodRender, "namespace: shop-prod", "namespace: shop-staging")},
			[]string{`destination namespace "shop-prod", but 2 objects of its source overlays/prod render into namespace "shop-staging" (Deployment/web, Service/web)`}},
		{"no namespace lands in the destination", prodApp, map[int]string{-1: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}, nil},
		{"every object in another namespace: nothing lands in the destination", prodApp, map[int]string{-1: strings.ReplaceAll(prodRender, "namespace: shop-prod", "namespace: shop-staging")},
			[]string{`render into namespace "shop-staging" (Deployment/web, Service/web) and none of its namespaced objects into "shop-prod": the sync goes green and nothing of it lands in "shop-prod"`}},
		{"objects in two other namespaces, none in the destination", prodApp, map[int]string{-1: strings.Replace(strings.ReplaceAll(prodRender, "namespace: shop-prod", "namespace: shop-staging"), "shop-staging", "shop-qa", 1)},
			[]string{`1 object of its source overlays/prod render into namespace "shop-qa" (Deployment/web) and none`, `1 object of its source overlays/prod render into namespace "shop-staging" (Service/web) and none`}},
		// An aggregated API server's RoleBinding to read the
		// authentication config lives in kube-system; the rest of the app
		// sets no namespace or names the destination, and lands there.
		// Both were a false "nothing lands in shop-prod".
		// A warning names it, without failing the deploy.
		{"objects without a namespace and a RoleBinding in kube-system", prodApp, map[int]string{-1: strings.ReplaceAll(prodRender, ", namespace: shop-prod", "") + authReader},
			[]string{`1 object of its source overlays/prod render into namespace "kube-system" (RoleBinding/web-auth-reader) while 2 namespaced objects land in "shop-prod": if they belong there by design`}},
		{"objects in the destination and a RoleBinding in kube-system", prodApp, map[int]string{-1: prodRender + authReader},
			[]string{`render into namespace "kube-system" (RoleBinding/web-auth-reader) while 2 namespaced objects land in "shop-prod"`}},
		// Most objects written for another namespace, one that follows
		// the destination: the others are named (the rule fired before
		// the kube-system case was allowed, and then said nothing).
		{"most objects in another namespace, one without", prodApp, map[int]string{-1: strings.ReplaceAll(prodRender, "namespace: shop-prod", "namespace: shop-staging") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"},
			[]string{`2 objects of its source overlays/prod render into namespace "shop-staging" (Deployment/web, Service/web) while 1 namespaced object land in "shop-prod"`}},
		{"no destination namespace and none in the render", strings.Replace(prodApp, ", namespace: shop-prod}", "}", 1),
			map[int]string{-1: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}, []string{"has no destination namespace, and 1 namespaced object"}},
		{"no destination namespace, explicit namespaces", strings.Replace(prodApp, ", namespace: shop-prod}", "}", 1),
			map[int]string{-1: prodRender}, nil}, // they say where they go; nothing is left to a default
		{"cluster-scoped kinds and a CRD's cluster kind are ignored", prodApp, map[int]string{-1: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec: {group: example.com, scope: Cluster, names: {kind: Widget, plural: widgets}}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: elsewhere}
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: letsencrypt, namespace: cert-manager}
`}, nil},
		{"a CRD's namespaced kind counts", prodApp, map[int]string{-1: `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusters.example.com}
spec: {group: example.com, scope: Namespaced, names: {kind: ClusterThing, plural: clusterthings}}
---
apiVersion: example.com/v1
kind: ClusterThing
metadata: {name: w, namespace: elsewhere}
`}, []string{`render into namespace "elsewhere"`}},
		{"Argo CD's own objects (app of apps) are ignored", prodApp, map[int]string{-1: `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: child, namespace: argocd}
`}, nil},
		{"multi-source: the second source is off", multiApp, map[int]string{0: prodRender, 1: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: platform}\n"},
			[]string{`1 object of its source platform render into namespace "platform"`}},
		{"multi-source: both land in the destination", multiApp, map[int]string{0: prodRender, 1: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}, nil},
		{"without a render nothing is judged", prodApp, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := ruletest.Parse(t, c.app)
			var apps []argo.AppSource
			for i, r := range c.sources {
				apps = append(apps, appSource(t, res[0], i, "overlays/prod", r))
				if i == 1 {
					apps[len(apps)-1].Path = "platform"
				}
			}
			got := check(t, "argocd-destination-namespace", res, apps, nil)
			assertFindings(t, got, c.want)
			for _, f := range got {
				if f.ResourceRef.Kind != "Application" || f.Field.Path != "spec.destination.namespace" {
					t.Errorf("finding names %v %v, want the Application's spec.destination.namespace", f.ResourceRef, f.Field)
				}
			}
		})
	}
}

func TestDestinationNamespaceProposesTheRenderedNamespace(t *testing.T) {
	res := ruletest.Parse(t, prodApp)
	apps := []argo.AppSource{appSource(t, res[0], -1, "overlays/prod", strings.ReplaceAll(prodRender, "shop-prod", "shop-staging"))}
	got := check(t, "argocd-destination-namespace", res, apps, nil)
	if len(got) != 1 || got[0].Field.CurrentValue != "shop-prod" || got[0].Field.ProposedValue != "shop-staging" {
		t.Fatalf("got %+v, want shop-prod → shop-staging", got)
	}
}

func TestSourceEmpty(t *testing.T) {
	res := ruletest.Parse(t, multiApp)
	local := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: {config.kubernetes.io/local-config: \"true\"}\n"
	cases := []struct {
		name string
		apps []argo.AppSource
		want []string
	}{
		{"renders", []argo.AppSource{appSource(t, res[0], 0, "overlays/prod", prodRender)}, nil},
		{"renders nothing", []argo.AppSource{appSource(t, res[0], 1, "platform", "")}, []string{"its source platform renders zero objects"}},
		{"renders only local config", []argo.AppSource{appSource(t, res[0], 0, "overlays/prod", local)}, []string{"its source overlays/prod renders zero objects"}},
		{"a failed render is no verdict, not empty", []argo.AppSource{{App: res[0], Index: 0, Err: errTest}}, nil},
		{"a skipped source is not empty", []argo.AppSource{{App: res[0], Index: 0, Skipped: "Helm"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := check(t, "argocd-source-empty", res, c.apps, nil)
			assertFindings(t, got, c.want)
			for _, f := range got {
				if !strings.HasSuffix(f.Field.Path, ".path") {
					t.Errorf("field %s, want the source's path", f.Field.Path)
				}
			}
		})
	}
}

var errTest = &testError{}

type testError struct{}

func (*testError) Error() string { return "render failed" }

func TestSourceNotRendered(t *testing.T) {
	helm := `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: redis, namespace: argocd}
spec:
  source: {repoURL: https://charts.bitnami.com/bitnami, chart: redis, targetRevision: 18.0.0}
  destination: {namespace: redis}
`
	appSet := `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: clusters, namespace: argocd}
spec: {generators: [{clusters: {}}], template: {metadata: {name: x}, spec: {}}}
`
	cases := []struct {
		name, input string
		apps        func(app *yaml.RNode) []argo.AppSource
		want        []string
	}{
		{"no --apps-root: every manifest source warns, a ref source does not", multiApp, nil,
			[]string{"this source (path overlays/prod of", "this source (path platform of"}},
		{"rendered", prodApp, func(app *yaml.RNode) []argo.AppSource {
			return []argo.AppSource{{App: app, Index: -1, Path: "overlays/prod"}}
		}, nil},
		{"a Helm chart", helm, func(app *yaml.RNode) []argo.AppSource {
			return []argo.AppSource{{App: app, Index: -1, Skipped: "Helm chart redis"}}
		}, []string{"this source was not rendered (Helm chart redis)"}},
		{"a Helm chart without --apps-root", helm, nil, []string{"Helm chart redis from https://charts.bitnami.com/bitnami"}},
		{"an ApplicationSet", appSet, nil, []string{"ApplicationSet clusters generates its Applications at run time"}},
		{"no source at all", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: bare}\n", nil, []string{"has no spec.source or spec.sources"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := ruletest.Parse(t, c.input)
			var apps []argo.AppSource
			if c.apps != nil {
				apps = c.apps(res[0])
			}
			got := check(t, "argocd-source-not-rendered", res, apps, nil)
			assertFindings(t, got, c.want)
			for _, f := range got {
				// Issue 10: unrendered is no verdict, not a warning.
				if f.Severity != finding.SeverityError || !f.NoVerdict {
					t.Errorf("severity %s, no verdict %v, want an error that is no verdict", f.Severity, f.NoVerdict)
				}
			}
		})
	}
	// The trusted caller may take named Applications out of scope; the
	// report still lists each exclusion.
	for _, entry := range []string{"redis", "argocd/redis"} {
		cfg := config.Default()
		cfg.ArgoCD.Exclude = []string{entry}
		got := check(t, "argocd-source-not-rendered", ruletest.Parse(t, helm), nil, cfg)
		if len(got) != 1 || got[0].Severity != finding.SeverityInfo || !strings.Contains(got[0].Message, `excluded by spec.argocd.exclude "`+entry+`": 1 source(s) not rendered`) {
			t.Errorf("exclude %s: %+v", entry, got)
		}
	}
	cfg := config.Default()
	cfg.ArgoCD.Exclude = []string{"other"}
	if got := check(t, "argocd-source-not-rendered", ruletest.Parse(t, helm), nil, cfg); len(got) != 1 || !got[0].NoVerdict {
		t.Errorf("another app's exclusion: %+v", got)
	}
}

// assertFindings wants one finding per substring, in order.
func assertFindings(t *testing.T, got []finding.Finding, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d findings, want %d:\n%s", len(got), len(want), messages(got))
	}
	for i, w := range want {
		if !strings.Contains(got[i].Message, w) {
			t.Errorf("finding %d: %q lacks %q", i, got[i].Message, w)
		}
	}
}

func messages(fs []finding.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + f.Message + "\n")
	}
	return b.String()
}

// TestSourceNotRenderedCannotBeSwitchedOff: "off" or "warning" for the rule
// does not turn a source the gate did not see into a pass (issue 9).
func TestSourceNotRenderedCannotBeSwitchedOff(t *testing.T) {
	helm := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: redis, namespace: argocd}\nspec:\n  source: {repoURL: https://charts.bitnami.com/bitnami, chart: redis, targetRevision: 18.0.0}\n  destination: {namespace: redis}\n"
	for _, sev := range []string{"off", "warning"} {
		cfg := config.Default()
		cfg.Rules = map[string]string{"argocd-source-not-rendered": sev}
		got := check(t, "argocd-source-not-rendered", ruletest.Parse(t, helm), nil, cfg)
		if len(got) != 1 || !got[0].NoVerdict || got[0].Severity != finding.SeverityError {
			t.Errorf("rule %s: %+v, want one no-verdict error", sev, got)
		}
	}
}
