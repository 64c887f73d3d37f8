package plugin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// gitopsRepo is the repoURL of the generated checkouts below.
const gitopsRepo = "https://github.com/example/gitops.git"

// appsetCheckout is a repository with one kustomize overlay per
// environment and an ApplicationSet (list generator) deploying them; the
// staging element's namespace is `namespace`.
func appsetCheckout(t *testing.T, namespace string) string {
	return testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"envs/base/kustomization.yaml": "resources: [web.yaml]\n",
		"envs/base/web.yaml": `apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
`,
		"envs/prod/kustomization.yaml":    "namespace: shop-prod\nresources: [../base]\n",
		"envs/staging/kustomization.yaml": "namespace: shop-staging\nresources: [../base]\n",
		"argocd/shop.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: shop, namespace: argocd}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list:
      elements:
      - {env: prod, namespace: shop-prod}
      - {env: staging, namespace: ` + namespace + `}
  template:
    metadata: {name: 'shop-{{.env}}'}
    spec:
      project: default
      source: {repoURL: ` + gitopsRepo + `, targetRevision: main, path: 'envs/{{.env}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.namespace}}'}
`,
	})
}

func TestE2EApplicationSetElementWithWrongNamespace(t *testing.T) {
	good := appsetCheckout(t, "shop-staging")
	// --target-branch: the checkout has no git history (else one info
	// line says which revision it was taken for).
	r := runGate(t, good, "check", "-f", "argocd/", "--apps-root", ".", "--repo-url", gitopsRepo, "--target-branch", "main", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("green checkout: exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var doc struct {
		Results []struct{ Rule, Message string }
		Summary struct{ Resources int }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	// The ApplicationSet, its 2 Applications and their 2 renders.
	if len(doc.Results) != 0 || doc.Summary.Resources != 1+2+2 {
		t.Errorf("%d findings over %d resources, want none over 5:\n%s", len(doc.Results), doc.Summary.Resources, r.Stdout)
	}

	bad := appsetCheckout(t, "shop-stagin")
	for _, format := range []string{"text", "json", "sarif", "junit", "github"} {
		r = runGate(t, bad, "check", "-f", "argocd/", "--apps-root", ".", "--repo-url", gitopsRepo, "-o", format)
		if r.Code != 1 {
			t.Fatalf("-o %s: exit %d, want 1\n%s%s", format, r.Code, r.Stdout, r.Stderr)
		}
		for _, want := range []string{"argocd-destination-namespace", "shop-staging", "spec.generators[0].list.elements[1]", "ApplicationSet argocd/shop"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("-o %s: the finding does not name %q:\n%s", format, want, r.Stdout)
			}
		}
	}
}

func TestE2EApplicationSetClusterGeneratorIsNoVerdict(t *testing.T) {
	dir := appsetCheckout(t, "shop-staging")
	testutil.WriteFiles(t, dir, map[string]string{"argocd/fleet.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: fleet, namespace: argocd}
spec:
  generators:
  - clusters: {selector: {matchLabels: {env: prod}}}
  template:
    metadata: {name: 'shop-{{name}}'}
    spec:
      project: default
      source: {repoURL: ` + gitopsRepo + `, path: envs/prod}
      destination: {server: '{{server}}', namespace: shop-prod}
`})
	r := runGate(t, dir, "check", "-f", "argocd/", "--apps-root", ".", "--repo-url", gitopsRepo)
	if r.Code != 3 || !strings.Contains(r.Stdout+r.Stderr, "spec.generators[0].clusters") {
		t.Fatalf("exit %d, want 3 naming the clusters generator\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Without --apps-root nothing is expanded: the ApplicationSets are
	// not rendered, which is no verdict (issue 10), never a pass.
	r = runGate(t, dir, "check", "-f", "argocd/")
	if r.Code != 3 || strings.Count(r.Stdout, "[argocd-source-not-rendered]") != 2 {
		t.Fatalf("without --apps-root: exit %d, want 3 and 2 findings\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// fleetRepo is the url of the Flux checkouts below.
const fleetRepo = "ssh://git@github.com/example/fleet"

// fleetCheckout is a repository as `flux bootstrap` leaves it, with an
// apps Kustomization whose images: entry sets newTag (and digest unless
// digest is "").
func fleetCheckout(t *testing.T, digest string) string {
	image := "    - {name: ghcr.io/example/web, newTag: \"1.4.2\""
	if digest != "" {
		image += ", digest: " + digest
	}
	image += "}\n"
	return testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"clusters/prod/flux-system/gotk-sync.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, url: ` + fleetRepo + `, ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 10m, path: ./clusters/prod, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`,
		"clusters/prod/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps/prod
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  targetNamespace: shop
  images:
` + image + `  postBuild:
    substitute: {REPLICAS: "3"}
`,
		"apps/prod/kustomization.yaml": "resources: [web.yaml]\n",
		"apps/prod/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: ${REPLICAS}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: ghcr.io/example/web:1.0.0}]}
`,
	})
}

func TestE2EFluxKustomization(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	good := fleetCheckout(t, digest)
	r := runGate(t, good, "check", "-R", "-f", "clusters/prod/", "--apps-root", ".", "--repo-url", fleetRepo, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var doc struct{ Summary struct{ Resources int } }
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	// Input: GitRepository + 2 Kustomizations; flux-system renders those 3
	// again, apps renders the Deployment.
	if doc.Summary.Resources != 3+3+1 {
		t.Errorf("%d resources, want 7", doc.Summary.Resources)
	}
	// The Kustomization's images: sets a tag without the digest: the
	// render is what the cluster receives, and it is red.
	bad := fleetCheckout(t, "")
	r = runGate(t, bad, "check", "-R", "-f", "clusters/prod/", "--apps-root", ".", "--repo-url", fleetRepo)
	if r.Code != 1 || !strings.Contains(r.Stdout, "ghcr.io/example/web:1.4.2") || !strings.Contains(r.Stdout, "rendered by Flux Kustomization flux-system/apps") {
		t.Fatalf("exit %d, want 1 naming the Kustomization\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The finding names the file and line the object came from, as for
	// -k (it named no file, and SARIF the -f directory at line 1).
	if !strings.Contains(r.Stdout, "Deployment/web (ns shop) [apps/prod/web.yaml]") || !strings.Contains(r.Stdout, "[line 9]") {
		t.Errorf("the finding names no file and line\n%s", r.Stdout)
	}
	if r = runGate(t, bad, "check", "-R", "-f", "clusters/prod/", "--apps-root", ".", "--repo-url", fleetRepo, "-o", "sarif"); !strings.Contains(r.Stdout, `"uri": "apps/prod/web.yaml"`) || !strings.Contains(r.Stdout, `"startLine": 9`) {
		t.Errorf("SARIF: the result is not at apps/prod/web.yaml:9\n%s", r.Stdout)
	}
	// Without --apps-root nothing Flux deploys is rendered: no verdict,
	// never a pass; the trusted caller may exclude them by name, listed.
	r = runGate(t, good, "check", "-R", "-f", "clusters/prod/")
	if r.Code != 3 || strings.Count(r.Stdout, "[flux-not-rendered]") != 2 {
		t.Fatalf("without --apps-root: exit %d, want 3 and 2 findings\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runGate(t, good, "check", "-R", "-f", "clusters/prod/", "--exclude-app", "flux-system/apps", "--exclude-app", "flux-system")
	if r.Code != 0 || strings.Count(r.Stdout, "INFO [flux-not-rendered]") != 2 {
		t.Fatalf("excluded: exit %d, want 0 and 2 exclusions listed\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Another repository: no verdict.
	r = runGate(t, good, "check", "-R", "-f", "clusters/prod/", "--apps-root", ".", "--repo-url", "https://github.com/someone/else")
	if r.Code != 3 || !strings.Contains(r.Stdout+r.Stderr, "is not the repository checked out") {
		t.Fatalf("another repository: exit %d, want 3\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// A Kustomization without targetNamespace over objects without a
	// namespace: kustomize-controller cannot apply them.
	testutil.WriteFiles(t, good, map[string]string{
		"clusters/prod/infra.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra, namespace: flux-system}
spec: {interval: 1h, path: ./infra, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`,
		"infra/quota.yaml": "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute}\nspec: {hard: {pods: \"50\"}}\n",
	})
	r = runGate(t, good, "check", "-R", "-f", "clusters/prod/", "--apps-root", ".", "--repo-url", fleetRepo)
	if r.Code != 1 || !says(r.Stdout, "Kustomization/infra (ns flux-system)\n  [flux-target-namespace]") || !strings.Contains(r.Stdout, "ResourceQuota/compute") {
		t.Fatalf("no targetNamespace: exit %d, want 1\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// selftest: the targetNamespace mutant is caught on the rendered ones.
	r = runGate(t, fleetCheckout(t, digest), "selftest", "-R", "-f", "clusters/prod/", "--apps-root", ".", "--repo-url", fleetRepo)
	caught := false
	for _, line := range strings.Split(r.Stdout, "\n") {
		caught = caught || strings.HasPrefix(line, "flux-target-namespace") && strings.Contains(line, "FAIL")
	}
	if r.Code != 0 || !caught {
		t.Errorf("selftest: exit %d, the targetNamespace mutant must be caught\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestE2EApplicationSetSelftest(t *testing.T) {
	r := runGate(t, appsetCheckout(t, "shop-staging"), "selftest", "-f", "argocd/", "--apps-root", ".", "--repo-url", gitopsRepo)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	caught := false
	for _, line := range strings.Split(r.Stdout, "\n") {
		caught = caught || strings.Contains(line, "an ApplicationSet list element with a wrong namespace (spec.generators[0].list.elements[0].namespace)") && strings.Contains(line, "FAIL")
	}
	if !caught {
		t.Errorf("the ApplicationSet element mutant was not run or not caught:\n%s", r.Stdout)
	}
}

func TestE2EFluxHelmReleaseLocalChart(t *testing.T) {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	dir := fleetCheckout(t, "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	release := func(image string) map[string]string {
		return map[string]string{
			"charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
			"charts/web/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: '{{ .Release.Name }}', namespace: '{{ .Release.Namespace }}'}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: '{{ .Values.image }}'}]}
`,
			"clusters/prod/web.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: flux-system}
spec:
  interval: 10m
  targetNamespace: shop
  chart:
    spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: flux-system}}
  values: {image: "` + image + `"}
`,
		}
	}
	testutil.WriteFiles(t, dir, release("ghcr.io/example/web:1.4.2"+digest))
	r := runGate(t, dir, "check", "-R", "-f", "clusters/prod/", "--apps-root", ".", "--repo-url", fleetRepo)
	if r.Code != 0 {
		t.Fatalf("pinned chart value: exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	testutil.WriteFiles(t, dir, release("ghcr.io/example/web:1.4.2"))
	r = runGate(t, dir, "check", "-R", "-f", "clusters/prod/", "--apps-root", ".", "--repo-url", fleetRepo)
	for _, want := range []string{"Deployment/shop-web (ns shop)\n  ERROR [image-digest]", "rendered by Flux HelmRelease flux-system/web"} {
		if r.Code != 1 || !says(r.Stdout, want) {
			t.Fatalf("a tag from the HelmRelease's values: exit %d, want 1 and %q\n%s%s", r.Code, want, r.Stdout, r.Stderr)
		}
	}
}

// TestE2EFluxBootstrapLayout: a repository as `flux bootstrap` writes it
// has clusters/<name>/flux-system/kustomization.yaml. -R -f renders that
// nested root with kustomize (as Flux's generated kustomization does)
// instead of refusing it, and the Kustomizations beside it still render
// from the checkout.
func TestE2EFluxBootstrapLayout(t *testing.T) {
	dir := fleetCheckout(t, "")
	if err := os.WriteFile(filepath.Join(dir, "clusters/prod/flux-system/kustomization.yaml"),
		[]byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [gotk-sync.yaml]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runGate(t, dir, "check", "-R", "-f", "clusters/prod/", "--apps-root", ".", "--repo-url", fleetRepo)
	if r.Code != 1 || !strings.Contains(r.Stdout, "ghcr.io/example/web:1.4.2") || !strings.Contains(r.Stdout, "rendered by Flux Kustomization flux-system/apps") {
		t.Fatalf("exit %d, want 1 naming the Kustomization\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The given directory itself is still no -f input when it is a root.
	r = runGate(t, dir, "check", "-R", "-f", "clusters/prod/flux-system", "--apps-root", ".", "--repo-url", fleetRepo)
	if r.Code != 2 || !strings.Contains(r.Stderr, "use -k") {
		t.Fatalf("-f on a root: exit %d, want 2\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// Two ApplicationSets that generate one Application, or an ApplicationSet
// that generates an Application the checkout also writes, fight over it in
// Argo CD (argo-cd#15874): the ApplicationSet controller refuses to update
// an Application another ApplicationSet owns ("already owned by another
// ApplicationSet controller"), and takes a written one over. Before, each
// ApplicationSet's Applications were compared with its own only: both
// passed, exit 0 (found by review with two ApplicationSets of one
// checkout). Applications in other namespaces are other Applications.
func TestE2EApplicationSetsGenerateOneApplication(t *testing.T) {
	hotfix := func(ns string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: hotfix, namespace: ` + ns + `}
spec:
  goTemplate: true
  generators:
  - list:
      elements:
      - {env: prod}
  template:
    metadata: {name: 'shop-{{.env}}'}
    spec:
      project: default
      source: {repoURL: ` + gitopsRepo + `, targetRevision: main, path: envs/staging}
      destination: {server: https://kubernetes.default.svc, namespace: shop-staging}
`
	}
	const written = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop-staging, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + gitopsRepo + `, targetRevision: main, path: envs/prod}
  destination: {server: https://kubernetes.default.svc, namespace: shop-prod}
`
	const root = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: root, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + gitopsRepo + `, targetRevision: main, path: argocd}
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
`
	for _, tc := range []struct {
		name  string
		files map[string]string
		args  []string
		code  int
		want  []string
	}{
		{"a second ApplicationSet", map[string]string{"argocd/hotfix.yaml": hotfix("argocd")}, []string{"-f", "argocd/"}, 1, []string{
			"ERROR [render-duplicate]: Application argocd/shop-prod is also generated by ApplicationSet argocd/",
			"already owned by another ApplicationSet controller",
			"ApplicationSet argocd/hotfix from spec.generators[0].list.elements[0]",
			"ApplicationSet argocd/shop from spec.generators[0].list.elements[0]",
		}},
		{"a written Application", map[string]string{"argocd/shop-staging.yaml": written}, []string{"-f", "argocd/"}, 1, []string{
			"Application/shop-staging (ns argocd) [argocd/shop.yaml]\n  ERROR [render-duplicate]: Application argocd/shop-staging is also written in argocd/shop-staging.yaml: the ApplicationSet controller takes the written Application over",
			"(generated by ApplicationSet argocd/shop from spec.generators[0].list.elements[1]",
		}},
		{"a written Application in an app of apps", map[string]string{"argocd/shop-staging.yaml": written, "root.yaml": root}, []string{"-f", "root.yaml"}, 1, []string{
			"ERROR [render-duplicate]: Application argocd/shop-staging is also written in argocd/shop-staging.yaml (Application argocd/root spec.source from argocd)",
		}},
		{"a second ApplicationSet in another namespace", map[string]string{"argocd/hotfix.yaml": hotfix("team-shop")}, []string{"-f", "argocd/"}, 0, nil},
		{"an app of apps", map[string]string{"root.yaml": root}, []string{"-f", "root.yaml"}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := appsetCheckout(t, "shop-staging")
			testutil.WriteFiles(t, dir, tc.files)
			r := runGate(t, dir, append(append([]string{"check"}, tc.args...), "--apps-root", ".", "--repo-url", gitopsRepo, "--target-branch", "main")...)
			if r.Code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stdout, w) {
					t.Errorf("output lacks %q\n%s", w, r.Stdout)
				}
			}
			if n := strings.Count(r.Stdout, "[render-duplicate]"); n != min(len(tc.want), 1) {
				t.Errorf("%d render-duplicate findings, want %d\n%s", n, min(len(tc.want), 1), r.Stdout)
			}
		})
	}
}
