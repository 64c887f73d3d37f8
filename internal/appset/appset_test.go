package appset

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// checkout is a GitOps repository laid out as Argo CD's ApplicationSet
// examples are: one directory per app, one config file per cluster.
func checkout(t *testing.T) string {
	return testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"apps/guestbook/kustomization.yaml":      "resources: [svc.yaml]\n",
		"apps/guestbook/svc.yaml":                "apiVersion: v1\nkind: Service\nmetadata: {name: guestbook}\n",
		"apps/helm-guestbook/Chart.yaml":         "apiVersion: v2\nname: helm-guestbook\nversion: 0.1.0\n",
		"apps/Kustomize_Demo/kustomization.yaml": "resources: []\n",
		"apps/.hidden/x.yaml":                    "{}\n",
		"apps/excluded/x.yaml":                   "{}\n",
		"clusters/prod/config.json":              `{"cluster": {"name": "prod", "address": "https://prod.example.com"}, "namespace": "shop-prod"}`,
		"clusters/staging/config.json":           `{"cluster": {"name": "staging", "address": "https://staging.example.com"}, "namespace": "shop-staging"}`,
		"clusters/multi/config.yaml":             "- {cluster: {name: eu}, namespace: shop-eu}\n- {cluster: {name: us}, namespace: shop-us}\n",
		".git/HEAD":                              "ref: refs/heads/main\n",
	})
}

func parse(t *testing.T, s string) *yaml.RNode {
	t.Helper()
	n, err := yaml.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func expand(t *testing.T, root, doc string) []Generated {
	t.Helper()
	out, err := Expand(parse(t, doc), Options{Root: root})
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	return out
}

func field(t *testing.T, n *yaml.RNode, path ...string) string {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		return ""
	}
	return yaml.GetValue(v)
}

// summary lists name → destination namespace.
func summary(t *testing.T, gens []Generated) map[string]string {
	out := map[string]string{}
	for _, g := range gens {
		out[g.App.GetName()] = field(t, g.App, "spec", "destination", "namespace")
	}
	return out
}

func equal(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

const listAppSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: shop, namespace: argocd}
spec:
  generators:
  - list:
      elements:
      - {cluster: prod, url: https://prod.example.com, namespace: shop-prod}
      - {cluster: staging, url: https://staging.example.com, namespace: shop-stagin}
  template:
    metadata:
      name: 'shop-{{cluster}}'
      labels: {'{{cluster}}': 'true'}
    spec:
      project: default
      source: {repoURL: https://github.com/example/gitops.git, targetRevision: HEAD, path: 'envs/{{cluster}}'}
      destination: {server: '{{url}}', namespace: '{{ namespace }}'}
`

func TestListFasttemplate(t *testing.T) {
	gens := expand(t, checkout(t), listAppSet)
	equal(t, summary(t, gens), map[string]string{"shop-prod": "shop-prod", "shop-staging": "shop-stagin"})
	g := gens[1]
	if !strings.HasPrefix(g.Element, "spec.generators[0].list.elements[1] ") || !strings.Contains(g.Element, `"namespace":"shop-stagin"`) {
		t.Errorf("element = %q; want it to name the list element and its values", g.Element)
	}
	for path, want := range map[string]string{
		"metadata.namespace": "argocd", "spec.source.path": "envs/staging", "metadata.labels.staging": "true",
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "spec.destination.server": "https://staging.example.com",
	} {
		if got := field(t, g.App, strings.Split(path, ".")...); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if f := field(t, g.App, "metadata", "finalizers"); f == "" {
		if fin, _ := g.App.Pipe(yaml.Lookup("metadata", "finalizers")); fin == nil {
			t.Error("the resources finalizer is missing")
		}
	}
}

func TestFasttemplateLeavesUnknownTags(t *testing.T) {
	doc := strings.Replace(listAppSet, "path: 'envs/{{cluster}}'", "path: 'envs/{{region}}'", 1)
	gens := expand(t, checkout(t), doc)
	if got := field(t, gens[0].App, "spec", "source", "path"); got != "envs/{{region}}" {
		t.Errorf("path = %q; fasttemplate leaves a tag without a param as written", got)
	}
}

func TestListRejectsNonStringWithoutGoTemplate(t *testing.T) {
	doc := strings.Replace(listAppSet, "{cluster: prod,", "{cluster: prod, replicas: 3,", 1)
	_, err := Expand(parse(t, doc), Options{Root: checkout(t)})
	if err == nil || !strings.Contains(err.Error(), "replicas is not a string") {
		t.Fatalf("err = %v; a number in a fasttemplate list element is rejected as Argo CD does", err)
	}
}

const goTemplateAppSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: shop, namespace: argocd}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list:
      elements:
      - {cluster: prod, namespace: shop-prod, replicas: 3}
      - {cluster: Staging_EU, namespace: shop-staging, replicas: 1}
  template:
    metadata:
      name: 'shop-{{ .cluster | normalize }}'
    spec:
      project: default
      source: {repoURL: https://github.com/example/gitops.git, path: 'envs/{{.cluster | lower}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.namespace}}'}
  templatePatch: |
    {{- if gt (int .replicas) 2 }}
    spec:
      project: changed-by-patch
      syncPolicy:
        automated: {prune: true}
    {{- end }}
`

func TestGoTemplateAndTemplatePatch(t *testing.T) {
	gens := expand(t, checkout(t), goTemplateAppSet)
	equal(t, summary(t, gens), map[string]string{"shop-prod": "shop-prod", "shop-staging-eu": "shop-staging"})
	if got := field(t, gens[0].App, "spec", "syncPolicy", "automated", "prune"); got != "true" {
		t.Errorf("templatePatch not applied: prune = %q", got)
	}
	if got := field(t, gens[0].App, "spec", "project"); got != "default" {
		t.Errorf("project = %q; templatePatch may not change the project", got)
	}
	if got := field(t, gens[1].App, "spec", "syncPolicy", "automated", "prune"); got != "" {
		t.Errorf("templatePatch applied where its condition is false: prune = %q", got)
	}
}

func TestGoTemplateMissingKeyError(t *testing.T) {
	doc := strings.Replace(goTemplateAppSet, "'{{.namespace}}'", "'{{.ns}}'", 1)
	_, err := Expand(parse(t, doc), Options{Root: checkout(t)})
	if err == nil || !strings.Contains(err.Error(), "spec.generators[0].list.elements[0]") || !strings.Contains(err.Error(), "ns") {
		t.Fatalf("err = %v; missingkey=error fails the render and names the element", err)
	}
	// Without the option the key renders as "<no value>", as Go templates do.
	doc = strings.Replace(doc, `goTemplateOptions: ["missingkey=error"]`, "goTemplateOptions: []", 1)
	gens := expand(t, checkout(t), doc)
	if got := field(t, gens[0].App, "spec", "destination", "namespace"); got != "<no value>" {
		t.Errorf("namespace = %q", got)
	}
}

func TestGitDirectories(t *testing.T) {
	doc := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: apps, namespace: argocd}
spec:
  generators:
  - git:
      repoURL: https://github.com/example/gitops.git
      revision: HEAD
      directories:
      - path: apps/*
      - path: apps/excluded
        exclude: true
  template:
    metadata: {name: '{{path.basenameNormalized}}'}
    spec:
      project: default
      source: {repoURL: https://github.com/example/gitops.git, targetRevision: HEAD, path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{path[1]}}'}
`
	gens := expand(t, checkout(t), doc)
	equal(t, summary(t, gens), map[string]string{"guestbook": "guestbook", "helm-guestbook": "helm-guestbook", "kustomize-demo": "Kustomize_Demo"})
	if gens[0].Element != "spec.generators[0].git.directories: apps/Kustomize_Demo" {
		t.Errorf("element = %q", gens[0].Element)
	}
}

func TestGitFilesGoTemplate(t *testing.T) {
	doc := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: clusters, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: https://github.com/example/gitops.git
      revision: HEAD
      files:
      - path: "clusters/**/config.*"
      values: {team: 'shop-{{.cluster.name}}'}
  template:
    metadata: {name: '{{.cluster.name}}-shop'}
    spec:
      project: '{{.values.team}}'
      source: {repoURL: https://github.com/example/gitops.git, path: 'apps/{{index .path.segments 1}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.namespace}}'}
`
	gens := expand(t, checkout(t), doc)
	equal(t, summary(t, gens), map[string]string{"eu-shop": "shop-eu", "us-shop": "shop-us", "prod-shop": "shop-prod", "staging-shop": "shop-staging"})
	if gens[0].Element != "spec.generators[0].git.files: clusters/multi/config.yaml[0]" {
		t.Errorf("element = %q", gens[0].Element)
	}
	if got := field(t, gens[2].App, "spec", "project"); got != "shop-prod" {
		t.Errorf("values not rendered: project = %q", got)
	}
}

func TestGitFilesFlatParams(t *testing.T) {
	doc := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: clusters, namespace: argocd}
spec:
  generators:
  - git:
      repoURL: https://github.com/example/gitops.git
      files: [{path: clusters/*/config.json}, {path: clusters/staging/*, exclude: true}]
  template:
    metadata: {name: '{{cluster.name}}-{{path.basename}}'}
    spec:
      project: default
      source: {repoURL: https://github.com/example/gitops.git, path: '{{path}}'}
      destination: {server: '{{cluster.address}}', namespace: '{{namespace}}'}
`
	gens := expand(t, checkout(t), doc)
	equal(t, summary(t, gens), map[string]string{"prod-prod": "shop-prod"})
}

func TestMatrixGitDirectoriesTimesList(t *testing.T) {
	doc := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: matrix, namespace: argocd}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - matrix:
      generators:
      - git:
          repoURL: https://github.com/example/gitops.git
          directories: [{path: "apps/*guestbook"}]
      - list:
          elements:
          - {env: prod, app: '{{.path.basename}}'}
          - {env: dev, app: '{{.path.basename}}'}
  template:
    metadata: {name: '{{.path.basename}}-{{.env}}'}
    spec:
      project: default
      source: {repoURL: https://github.com/example/gitops.git, path: '{{.path.path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.app}}-{{.env}}'}
`
	gens := expand(t, checkout(t), doc)
	equal(t, summary(t, gens), map[string]string{
		"guestbook-prod": "guestbook-prod", "guestbook-dev": "guestbook-dev",
		"helm-guestbook-prod": "helm-guestbook-prod", "helm-guestbook-dev": "helm-guestbook-dev",
	})
	want := `spec.generators[0].matrix.generators[0].git.directories: apps/guestbook × spec.generators[0].matrix.generators[1].list.elements[1] {"app":"guestbook","env":"dev"}`
	if gens[1].Element != want {
		t.Errorf("element = %q, want %q", gens[1].Element, want)
	}
}

func TestMergeOverridesByKey(t *testing.T) {
	doc := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: merge, namespace: argocd}
spec:
  generators:
  - merge:
      mergeKeys: [cluster]
      generators:
      - list:
          elements:
          - {cluster: prod, namespace: shop}
          - {cluster: staging, namespace: shop}
      - list:
          elements:
          - {cluster: staging, namespace: shop-staging}
          - {cluster: nowhere, namespace: dropped}
  template:
    metadata: {name: 'shop-{{cluster}}'}
    spec:
      project: default
      source: {repoURL: https://github.com/example/gitops.git, path: apps/guestbook}
      destination: {server: https://kubernetes.default.svc, namespace: '{{namespace}}'}
`
	gens := expand(t, checkout(t), doc)
	equal(t, summary(t, gens), map[string]string{"shop-prod": "shop", "shop-staging": "shop-staging"})
	if !strings.Contains(gens[1].Element, " + spec.generators[0].merge.generators[1].list.elements[0]") {
		t.Errorf("element = %q; a merged param set names both elements", gens[1].Element)
	}
}

func TestSelectorAndGeneratorTemplate(t *testing.T) {
	doc := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: sel, namespace: argocd}
spec:
  generators:
  - list:
      elements: [{cluster: prod, tier: gold}, {cluster: dev, tier: bronze}]
      template:
        metadata: {}
        spec:
          project: gold
          destination: {namespace: 'gold-{{cluster}}'}
    selector:
      matchLabels: {tier: gold}
  template:
    metadata: {name: 'app-{{cluster}}'}
    spec:
      project: default
      source: {repoURL: https://github.com/example/gitops.git, path: apps/guestbook}
      destination: {server: https://kubernetes.default.svc, namespace: 'base-{{cluster}}'}
`
	gens := expand(t, checkout(t), doc)
	equal(t, summary(t, gens), map[string]string{"app-prod": "gold-prod"})
	if got := field(t, gens[0].App, "spec", "project"); got != "gold" {
		t.Errorf("project = %q; the generator's template wins where it sets a field", got)
	}
	if got := field(t, gens[0].App, "spec", "destination", "server"); got != "https://kubernetes.default.svc" {
		t.Errorf("server = %q; spec.template fills what the generator's template leaves empty", got)
	}
}

func TestOfflineGeneratorsAreNoVerdict(t *testing.T) {
	for _, gen := range []string{"clusters: {}", "clusterDecisionResource: {configMapRef: x}", "pullRequest: {github: {owner: o, repo: r}}",
		"scmProvider: {github: {organization: o}}", "plugin: {configMapRef: {name: p}}"} {
		doc := "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: x, namespace: argocd}\nspec:\n  generators:\n  - list: {elements: [{a: b}]}\n  - matrix:\n      generators:\n      - " + gen + "\n      - list: {elements: [{a: b}]}\n  template: {metadata: {name: x}, spec: {}}\n"
		_, err := Expand(parse(t, doc), Options{Root: checkout(t)})
		var nv *NoVerdictError
		if !errors.As(err, &nv) {
			t.Fatalf("%s: err = %v, want a NoVerdictError", gen, err)
		}
		kind := strings.SplitN(gen, ":", 2)[0]
		if nv.Generator != "spec.generators[1].matrix.generators[0]."+kind {
			t.Errorf("%s: generator = %q", gen, nv.Generator)
		}
	}
}

func TestGitOtherRepositoryIsNoVerdict(t *testing.T) {
	doc := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: other, namespace: argocd}
spec:
  generators:
  - git: {repoURL: https://github.com/other/repo.git, directories: [{path: "*"}]}
  template: {metadata: {name: '{{path.basename}}'}, spec: {}}
`
	opts := Options{Root: checkout(t), IsCheckout: func(u string) bool { return u == "https://github.com/example/gitops.git" }}
	_, err := Expand(parse(t, doc), opts)
	var nv *NoVerdictError
	if !errors.As(err, &nv) || nv.Generator != "spec.generators[0].git" || !strings.Contains(nv.Reason, "github.com/other/repo.git") {
		t.Fatalf("err = %v", err)
	}
}

func TestDuplicateNames(t *testing.T) {
	doc := strings.Replace(listAppSet, "name: 'shop-{{cluster}}'", "name: shop", 1)
	_, err := Expand(parse(t, doc), Options{Root: checkout(t)})
	if err == nil || !strings.Contains(err.Error(), `two Applications named "shop"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{"Hello World.Example": "hello-world-example", "a__b": "a-b"} {
		if got := slugify(in); got != want {
			t.Errorf("slugify(%q) = %q, want %q", in, got, want)
		}
	}
	if got := slugify(10, true, "release-candidate-one"); got != "release" {
		t.Errorf("smart truncation = %q", got)
	}
}

// A generated Application's lines are those of one line of JSON, not of
// the ApplicationSet's file: with the reader's path (as the pipeline sets
// it) and an index its template gives it, a finding names the file and no
// line.
func TestGeneratedLinesAreNotTheFiles(t *testing.T) {
	doc := strings.Replace(listAppSet, "      labels: {'{{cluster}}': 'true'}\n",
		"      labels: {'{{cluster}}': 'true'}\n      annotations: {config.kubernetes.io/index: '7', internal.config.kubernetes.io/index: '7'}\n", 1)
	gens := expand(t, checkout(t), doc)
	if len(gens) != 2 {
		t.Fatalf("generated %d Applications", len(gens))
	}
	for _, g := range gens {
		if err := g.App.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, "apps/shop.yaml")); err != nil {
			t.Fatal(err)
		}
		if _, index := manifest.FileAnnotations(g.App); index != "7" {
			t.Fatalf("the template's index annotation is not on the Application: %q", index)
		}
		f := manifest.SourceFileAt(g.App, "spec.destination.namespace")
		if f == nil || f.Path != "apps/shop.yaml" || f.Line != 0 {
			t.Errorf("%s: got %+v, want apps/shop.yaml and no line", g.App.GetName(), f)
		}
	}
}
