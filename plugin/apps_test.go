package plugin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// runGate runs the built kubectl-gate in dir.
func runGate(t *testing.T, dir string, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, dir, "", nil, testutil.Bin(t, "kubectl-gate"), args...)
}

// examplesRepo is the repoURL of examples/apps' Applications.
const examplesRepo = "https://github.com/kubectl-gate/kubectl-gate.git"

func TestE2EAppsExamples(t *testing.T) {
	root := testutil.Root(t)
	// --repo-url names the checkout: a CI clone's remote may be a local path.
	r := runGate(t, root, "check", "-f", "examples/apps/", "--apps-root", ".", "--repo-url", examplesRepo, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var doc struct {
		Results []json.RawMessage
		Summary struct{ Resources int }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	// The input holds 5 objects (4 Applications, argocd-cm); the rest are
	// the renders of their 5 sources, each counted and checked.
	if len(doc.Results) != 0 || doc.Summary.Resources <= 5+3+2+3 {
		t.Errorf("%d findings over %d resources, want none over the input and its sources' renders:\n%s", len(doc.Results), doc.Summary.Resources, r.Stdout)
	}
	// Another repository's checkout renders nothing of it: no verdict
	// (issue 10: it was a warning and exit 0).
	r = runGate(t, root, "check", "-f", "examples/apps/", "--apps-root", ".", "--repo-url", "https://github.com/someone/else")
	// The message says how to name the checkout when it is that repository
	// (issue 22: a clone from a local path was exit 3 without a hint).
	if r.Code != 3 || strings.Count(r.Stdout, "ERROR [argocd-source-not-rendered]") != 5 || !strings.Contains(r.Stdout, "is not the one checked out") ||
		!strings.Contains(r.Stdout, "pass --repo-url "+examplesRepo) {
		t.Errorf("--repo-url of another repository: exit %d, want 3 and 5 no-verdict findings:\n%s", r.Code, r.Stdout)
	}
	// Without --apps-root the sources are reported, never passed silently.
	r = runGate(t, root, "check", "-f", "examples/apps/")
	if r.Code != 3 || strings.Count(r.Stdout, "ERROR [argocd-source-not-rendered]") != 5 {
		t.Errorf("without --apps-root: exit %d, want 3 and 5 no-verdict findings:\n%s", r.Code, r.Stdout)
	}
	// The caller may take Applications out of scope; the report lists each.
	r = runGate(t, root, "check", "-f", "examples/apps/", "--exclude-app", "checkout", "--exclude-app", "argocd/ledger", "--exclude-app", "shop-preview", "--exclude-app", "shop-prod")
	if r.Code != 0 || strings.Count(r.Stdout, "INFO [argocd-source-not-rendered]") != 4 || !strings.Contains(r.Stdout, `excluded by --exclude-app "argocd/ledger"`) {
		t.Errorf("--exclude-app every Application: exit %d, want 0 and 4 exclusions listed:\n%s", r.Code, r.Stdout)
	}
	if r = runGate(t, root, "check", "-f", "examples/apps/", "--exclude-app", "checkout"); r.Code != 3 {
		t.Errorf("one Application excluded, others not rendered: exit %d, want 3", r.Code)
	}
}

func TestE2EAppsSelftest(t *testing.T) {
	r := runGate(t, testutil.Root(t), "selftest", "-f", "examples/apps/", "--apps-root", ".", "--repo-url", examplesRepo)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, rule := range []string{"argocd-destination-namespace", "argocd-ignore-differences", "argocd-source-empty"} {
		caught := false
		for _, line := range strings.Split(r.Stdout, "\n") {
			caught = caught || strings.HasPrefix(line, rule) && strings.Contains(line, "FAIL")
		}
		if !caught {
			t.Errorf("no mutant of %s was caught:\n%s", rule, r.Stdout)
		}
	}
}

// checkout copies the examples into a temp dir, as a repository checked
// out at that dir, with extra files.
func checkout(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(testutil.Root(t), "examples")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(src), p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		extra[rel] = string(data) + extra[rel]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return testutil.WriteFiles(t, dir, extra)
}

// app is an Application named bad deploying this repository.
func app(source, dest string) string {
	return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: bad, namespace: argocd}\nspec:\n  project: default\n  source: " +
		source + "\n  destination: {server: https://kubernetes.default.svc, namespace: " + dest + "}\n"
}

const repo = "repoURL: https://github.com/kubectl-gate/kubectl-gate.git"

func TestE2EAppsVariants(t *testing.T) {
	cases := []struct {
		name    string
		files   map[string]string
		code    int
		stdout  []string
		failure string // the no-verdict reason
	}{
		{"destination namespace differs", map[string]string{"examples/apps/bad.yaml": app("{"+repo+", path: examples/overlays/prod}", "shop")}, 1,
			[]string{`Application/bad (ns argocd)
  [argocd-destination-namespace] spec.destination.namespace: destination namespace "shop", but 3 objects of its source examples/overlays/prod render into namespace "shop-prod" (Deployment/web, Service/web, Deployment/worker) and none of its namespaced objects into "shop": the sync goes green and nothing of it lands in "shop"`}, ""},
		// An aggregated API server reads the authentication config in
		// kube-system: its RoleBinding is there on purpose, and the
		// objects that set no namespace land in the destination. It was a
		// false "nothing lands in api" (exit 1).
		{"objects in the destination and a RoleBinding in kube-system", map[string]string{
			"examples/apps/bad.yaml":          app("{"+repo+", path: examples/api}", "api"),
			"examples/api/kustomization.yaml": "resources: [api.yaml]\n",
			"examples/api/api.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      serviceAccountName: api
      containers:
      - name: api
        image: registry.k8s.io/pause:3.10@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: api}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: api-auth-reader, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: extension-apiserver-authentication-reader}
subjects: [{kind: ServiceAccount, name: api, namespace: api}]
`}, 0, []string{"PASS: "}, ""},
		{"kustomize.namespace overrides the render", map[string]string{"examples/apps/bad.yaml": app("{"+repo+", path: examples/overlays/prod, kustomize: {namespace: shop-qa}}", "shop-prod")}, 1,
			[]string{`render into namespace "shop-qa"`}, ""},
		{"an image override drops the overlay's digest", map[string]string{"examples/apps/bad.yaml": app("{"+repo+", path: examples/overlays/prod, kustomize: {images: ['ghcr.io/example-shop/web:1.4.3']}}", "shop-prod")}, 1,
			[]string{"== Application argocd/bad spec.source from examples/overlays/prod:", "Deployment/web (ns shop-prod)\n  ERROR [image-digest] spec.template.spec.containers[0].image: container \"web\": image \"ghcr.io/example-shop/web:1.4.3\" is not pinned by digest (tag 1.4.3) (image set by Application bad spec.source.kustomize.images[0] in examples/apps/bad.yaml) [line 6]"}, ""},
		{"every rule runs on the source", map[string]string{"examples/apps/bad.yaml": app("{"+repo+", path: examples/overlays/staging}", "shop-staging")}, 1,
			[]string{"== Application argocd/bad spec.source from examples/overlays/staging:", "Deployment/web (ns shop-staging)\n  ERROR [image-digest]"}, ""},
		{"a missing path is no verdict", map[string]string{"examples/apps/bad.yaml": app("{"+repo+", path: examples/overlays/nope}", "x")}, 3,
			nil, `no verdict: Application argocd/bad spec.source: spec.source.path "examples/overlays/nope"`},
		{"a path outside the repository is no verdict", map[string]string{"examples/apps/bad.yaml": app("{"+repo+", path: ../elsewhere}", "x")}, 3,
			nil, `spec.source.path "../elsewhere" leaves the repository`},
		{"path ./ is the repository root", map[string]string{"kustomization.yaml": "resources: [examples/overlays/prod]\n", "examples/apps/bad.yaml": app("{"+repo+", path: ./}", "shop-prod")}, 0,
			[]string{"PASS: "}, ""},
		{"path . is the repository root", map[string]string{"kustomization.yaml": "resources: [examples/overlays/prod]\n", "examples/apps/bad.yaml": app("{"+repo+", path: .}", "shop-prod")}, 0,
			[]string{"PASS: "}, ""},
		{"an empty source", map[string]string{"examples/apps/bad.yaml": app("{"+repo+", path: examples/empty}", "x"), "examples/empty/README.md": "nothing\n"}, 1,
			[]string{"Application/bad (ns argocd)\n  ERROR [argocd-source-empty] spec.source.path: its source examples/empty renders zero objects"}, ""},
		{"a Helm chart is reported, not passed", map[string]string{"examples/apps/bad.yaml": app("{repoURL: https://charts.bitnami.com/bitnami, chart: redis, targetRevision: 18.0.0}", "redis")}, 3,
			[]string{"Application/bad (ns argocd)\n  ERROR [argocd-source-not-rendered] spec.source: this source was not rendered (Helm chart redis"}, ""},
		{"an ApplicationSet that generates nothing is red", map[string]string{"examples/apps/set.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: shops, namespace: argocd}\nspec: {generators: [{list: {elements: []}}], template: {metadata: {name: x}, spec: {}}}\n"}, 1,
			[]string{"ERROR [render-empty]: ApplicationSet argocd/shops generates no Application"}, ""},
		{"app of apps: the child's source is checked", map[string]string{
			"examples/apps/bad.yaml":       app("{"+repo+", path: examples/children}", "argocd"),
			"examples/children/child.yaml": strings.ReplaceAll(app("{"+repo+", path: examples/overlays/staging}", "shop-staging"), "name: bad", "name: child")}, 1,
			[]string{"== Application argocd/child spec.source from examples/overlays/staging:"}, ""},
		{"a wide ignoreDifferences", map[string]string{"examples/apps/bad.yaml": app("{"+repo+", path: examples/overlays/prod}", "shop-prod") +
			"  ignoreDifferences: [{kind: Deployment, jsonPointers: [/spec/template/spec/containers/0/image]}]\n"}, 1,
			[]string{"Application/bad (ns argocd)\n  [argocd-ignore-differences] spec.ignoreDifferences[0].jsonPointers[0]"}, ""},
		{"a wide argocd-cm key", map[string]string{"examples/apps/argocd-cm.yaml": "  resource.customizations.ignoreDifferences.apps_Deployment: |\n    managedFieldsManagers: [kubectl-edit]\n"}, 1,
			[]string{"ConfigMap/argocd-cm (ns argocd)\n  [argocd-ignore-differences] data[resource.customizations.ignoreDifferences.apps_Deployment].managedFieldsManagers[0]"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runGate(t, checkout(t, c.files), "check", "-f", "examples/apps/", "--apps-root", ".")
			if r.Code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, c.code, r.Stdout, r.Stderr)
			}
			for _, s := range c.stdout {
				if !says(r.Stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.Stdout)
				}
			}
			// The no-verdict reason is printed with the report (or, before,
			// on stderr).
			if !strings.Contains(strings.ToLower(r.Stdout+r.Stderr), strings.ToLower(c.failure)) {
				t.Errorf("output lacks %q:\n%s%s", c.failure, r.Stdout, r.Stderr)
			}
			// (An ApplicationSet that generates nothing is render-empty on
			// its own unit: there is no source to double-count.)
			if strings.Contains(r.Stdout, "[render-empty]") && !strings.Contains(r.Stdout, "generates no Application") {
				t.Errorf("render-empty double-counts an empty source:\n%s", r.Stdout)
			}
		})
	}
}

// Sources in another repository than the checkout's are reported, not
// rendered from the wrong tree.
func TestE2EAppsOtherRepository(t *testing.T) {
	for remote, want := range map[string]string{
		"git@github.com:kubectl-gate/kubectl-gate.git": "0 error(s), 0 warning(s)",
		"https://github.com/someone/else.git":          "is not the one checked out at . (github.com/someone/else)",
	} {
		dir := checkout(t, map[string]string{".git/config": "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = " + remote + "\n"})
		r := runGate(t, dir, "check", "-f", "examples/apps/", "--apps-root", ".")
		code := 0
		if strings.Contains(remote, "someone") {
			code = 3 // not rendered: no verdict
		}
		if r.Code != code || !strings.Contains(r.Stdout, want) {
			t.Errorf("remote %s: exit %d, want %d and %q:\n%s%s", remote, r.Code, code, want, r.Stdout, r.Stderr)
		}
	}
}

// Without --apps-root, a -k render holding the Application that deploys
// that very directory is its source render.
func TestE2ESelfManagedKustomization(t *testing.T) {
	files := func(dest string) map[string]string {
		return map[string]string{
			"examples/overlays/self/kustomization.yaml": "resources: [../prod, app.yaml]\n",
			"examples/overlays/self/app.yaml":           strings.ReplaceAll(app("{"+repo+", path: examples/overlays/self}", dest), "namespace: argocd}", "namespace: shop-prod}"),
		}
	}
	r := runGate(t, checkout(t, files("shop-prod")), "check", "-k", "examples/overlays/self")
	if r.Code != 0 || strings.Contains(r.Stdout, "argocd-source-not-rendered") {
		t.Errorf("matching destination: exit %d, want 0 without warnings:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runGate(t, checkout(t, files("elsewhere")), "check", "-k", "examples/overlays/self")
	if r.Code != 1 || !strings.Contains(r.Stdout, `render into namespace "shop-prod"`) {
		t.Errorf("other destination: exit %d, want 1 and argocd-destination-namespace:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// Two Applications deploying the same render share one check: each finding
// once, naming both.
func TestE2EAppsSharedSourceIsCheckedOnce(t *testing.T) {
	staging := "{" + repo + ", path: examples/overlays/staging}"
	dir := checkout(t, map[string]string{
		"examples/apps/bad.yaml": app(staging, "shop-staging") + "---\n" + strings.ReplaceAll(app(staging, "shop-staging"), "name: bad", "name: twin"),
	})
	r := runGate(t, dir, "check", "-f", "examples/apps/", "--apps-root", ".")
	if r.Code != 1 || strings.Count(r.Stdout, `"ghcr.io/example-shop/web:1.5.0-rc.1" is not pinned`) != 1 ||
		!strings.Contains(r.Stdout, "== Application argocd/bad spec.source, argocd/twin spec.source from examples/overlays/staging:") {
		t.Errorf("exit %d, want 1 and one finding naming both Applications:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestE2EAppsRootMustExist(t *testing.T) {
	r := runGate(t, testutil.Root(t), "check", "-f", "examples/apps/", "--apps-root", "no/such/dir")
	if r.Code != 2 || !strings.Contains(r.Stderr, `--apps-root: "no/such/dir" is not a directory`) {
		t.Errorf("exit %d, want 2 (usage):\n%s", r.Code, r.Stderr)
	}
}

// An Application reachable twice — listed in the input and a child of an
// app of apps that points at the same folder — is named once.
func TestE2EAppsReachableTwiceNamedOnce(t *testing.T) {
	dir := checkout(t, map[string]string{
		"examples/apps/bad.yaml":  app("{"+repo+", path: examples/overlays/staging}", "shop-staging"),
		"examples/apps/root.yaml": strings.ReplaceAll(app("{"+repo+", path: examples/apps}", "argocd"), "name: bad", "name: root"),
	})
	r := runGate(t, dir, "check", "-f", "examples/apps/", "--apps-root", ".")
	if strings.Contains(r.Stdout, "argocd/bad spec.source, argocd/bad spec.source") || !strings.Contains(r.Stdout, "== Application argocd/bad spec.source from examples/overlays/staging:") {
		t.Errorf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// says: testutil.Says.
func says(out, want string) bool { return testutil.Says(out, want) }

// TestE2EAppsKustomizeHelmCharts: Argo CD builds a kustomize source whose
// kustomization inflates a chart (helmCharts:) only with --enable-helm in
// argocd-cm's kustomize.buildOptions. Without --enable-helm the gate says
// so (the hint told to pass --enable-helm, which did nothing for an
// Application's source: found by the hunts); with it, the source renders.
func TestE2EAppsKustomizeHelmCharts(t *testing.T) {
	files := map[string]string{
		"examples/apps/web.yaml":                        strings.ReplaceAll(app("{"+repo+", path: examples/web}", "web"), "name: bad", "name: web"),
		"examples/web/kustomization.yaml":               "helmCharts:\n- name: web\n  releaseName: web\n",
		"examples/web/charts/web/Chart.yaml":            "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"examples/web/charts/web/values.yaml":           "{}\n",
		"examples/web/charts/web/templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cfg\ndata:\n  a: \"1\"\n",
	}
	dir := checkout(t, files)
	r := runGate(t, dir, "check", "-f", "examples/apps/", "--apps-root", ".")
	if r.Code != 3 || !strings.Contains(r.Stdout+r.Stderr, "Argo CD renders helmCharts: only with --enable-helm in argocd-cm's kustomize.buildOptions") {
		t.Errorf("without --enable-helm: exit %d, want 3 and the hint\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runGate(t, dir, "check", "-f", "examples/apps/", "--apps-root", ".", "--enable-helm", "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"resources": 2`) {
		t.Errorf("with --enable-helm: exit %d, want 0 and the chart's ConfigMap checked\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestE2EAppsImageSetByAGeneratedApplication: an image an ApplicationSet's
// template sets through kustomize.images is named as the generated
// Application's entry in the ApplicationSet's file, with no line: the
// generated Application's nodes are not the file's (it named line 1).
func TestE2EAppsImageSetByAGeneratedApplication(t *testing.T) {
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: webs, namespace: argocd}
spec:
  generators:
  - list:
      elements:
      - env: a
  template:
    metadata: {name: 'web-{{env}}'}
    spec:
      project: default
      destination: {server: https://kubernetes.default.svc, namespace: shop-prod}
      source:
        ` + repo + `
        path: examples/overlays/prod
        kustomize:
          images: ['ghcr.io/example-shop/web:1.4.3']
`
	r := runGate(t, checkout(t, map[string]string{"examples/apps/set.yaml": set}), "check", "-f", "examples/apps/", "--apps-root", ".", "-o", "json")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var rep struct {
		Results []struct {
			Rule, Message string
			File          *struct {
				Path string
				Line int
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Results {
		if f.Rule == "image-digest" && strings.Contains(f.Message, "web:1.4.3") {
			if !strings.Contains(f.Message, "(image set by Application web-a spec.source.kustomize.images[0] in examples/apps/set.yaml)") ||
				f.File == nil || f.File.Path != "examples/apps/set.yaml" || f.File.Line != 0 {
				t.Errorf("finding %q at %+v, want the generated Application's entry in examples/apps/set.yaml, no line", f.Message, f.File)
			}
			return
		}
	}
	t.Fatalf("no image-digest finding on web:1.4.3:\n%s", r.Stdout)
}
