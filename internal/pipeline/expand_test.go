package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

const repoURL = "https://github.com/example/shop.git"

func application(name, path, namespace string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + name + `, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + repoURL + `, targetRevision: main, path: ` + path + `}
  destination: {server: https://kubernetes.default.svc, namespace: ` + namespace + `}
`
}

// shop is a checkout: two overlays of one base, Applications (two of them
// deploying the same overlay), an ApplicationSet over both overlays, and a
// Flux GitRepository (the checkout) with a Kustomization.
func shop(t *testing.T) string { return shopWith(t, "wrong") }

// shopWith is shop with the staging element's namespace.
func shopWith(t *testing.T, stagingNamespace string) string {
	return testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"envs/base/kustomization.yaml":    "resources: [web.yaml]\n",
		"envs/base/web.yaml":              web("ghcr.io/example/web:1@" + digest),
		"envs/prod/kustomization.yaml":    "namespace: shop-prod\nresources: [../base]\n",
		"envs/staging/kustomization.yaml": "namespace: shop-staging\nresources: [../base]\n",
		"apps/kustomization.yaml":         "resources: [prod.yaml, prod-again.yaml, set.yaml, flux.yaml]\n",
		"apps/prod.yaml":                  application("prod", "envs/prod", "shop-prod"),
		"apps/prod-again.yaml":            application("prod-again", "envs/prod", "shop-prod"),
		"apps/set.yaml": `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: shop, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - list:
      elements:
      - {env: prod, namespace: shop-prod}
      - {env: staging, namespace: ` + stagingNamespace + `}
  template:
    metadata: {name: 'shop-{{.env}}'}
    spec:
      project: default
      source: {repoURL: ` + repoURL + `, targetRevision: main, path: 'envs/{{.env}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.namespace}}'}
`,
		"apps/flux.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: shop, namespace: flux-system}
spec: {interval: 1m, url: ` + repoURL + `, ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: staging, namespace: flux-system}
spec: {interval: 10m, path: ./envs/staging, prune: true, sourceRef: {kind: GitRepository, name: shop}}
`,
	})
}

// byType returns the units whose source has type T.
func byType[T pipeline.Source](res *pipeline.Result) []*pipeline.Unit {
	var out []*pipeline.Unit
	for _, u := range res.Units {
		if _, ok := u.Source.(T); ok {
			out = append(out, u)
		}
	}
	return out
}

func TestExpandPlansEachSourceOnce(t *testing.T) {
	root := shop(t)
	in := pipeline.Inputs{Kustomizations: []string{filepath.Join(root, "apps")}, AppsRoot: root, RepoURLs: []string{repoURL}}
	res, err := pipeline.Plan(context.Background(), in, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sources := byType[*pipeline.AppSource](res)
	// envs/prod (two Applications, then the ApplicationSet's prod element
	// on the next level) and envs/staging (the staging element).
	if len(sources) != 2 {
		for _, u := range res.Units {
			t.Logf("unit %s", u.Input())
		}
		t.Fatalf("want 2 distinct Application source renders, got %d", len(sources))
	}
	prod := sources[0].Source.(*pipeline.AppSource)
	if filepath.Base(prod.Dir) != "prod" || len(prod.Apps) != 3 || prod.Apps[0] != "argocd/prod spec.source" || prod.Apps[1] != "argocd/prod-again spec.source" || prod.Apps[2] != "argocd/shop-prod spec.source" {
		t.Errorf("envs/prod: want one render named after the three Applications, got %s %v", prod.Dir, prod.Apps)
	}
	if len(sources[0].Resources) != 1 || sources[0].Resources[0].GetNamespace() != "shop-prod" || sources[0].Err != nil {
		t.Errorf("envs/prod: want its Deployment rendered into shop-prod, got %d objects (err %v)", len(sources[0].Resources), sources[0].Err)
	}
	sets := byType[*pipeline.ApplicationSet](res)
	if len(sets) != 1 || sets[0].Input() != "ApplicationSet argocd/shop" || len(sets[0].Resources) != 2 {
		t.Fatalf("want the ApplicationSet's 2 Applications as one unit, got %d units", len(sets))
	}
	flux := byType[*pipeline.FluxKustomization](res)
	if len(flux) != 1 || !strings.Contains(flux[0].Input(), "flux-system/staging") || flux[0].Err != nil || len(flux[0].Resources) != 1 {
		t.Fatalf("want the Flux Kustomization's render as a unit, got %d", len(flux))
	}
}

func TestExpandChecksWhatTheGeneratorsGenerate(t *testing.T) {
	root := shop(t)
	in := pipeline.Inputs{Kustomizations: []string{filepath.Join(root, "apps")}, AppsRoot: root, RepoURLs: []string{repoURL}}
	res, err := pipeline.Run(context.Background(), in, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set := byType[*pipeline.ApplicationSet](res)[0]
	if set.Err != nil {
		t.Fatal(set.Err)
	}
	var msg string
	for _, f := range set.Report.Findings {
		if f.Rule == "argocd-destination-namespace" {
			msg = f.Message
		}
	}
	// The staging element sends its Application to namespace "wrong".
	if !strings.Contains(msg, "generated by ApplicationSet argocd/shop from spec.generators[0].list.elements[1]") {
		t.Errorf("want argocd-destination-namespace naming the generator element, got %q", msg)
	}
	for _, u := range byType[*pipeline.AppSource](res) {
		for _, f := range u.Report.Findings {
			if !strings.Contains(f.Message, "(source of Application ") || f.Input != u.Input() {
				t.Errorf("a source's finding must name its Application and input, got %q (input %q)", f.Message, f.Input)
			}
		}
	}
}

func TestExpandWithoutAppsRoot(t *testing.T) {
	root := shop(t)
	res, err := pipeline.Plan(context.Background(), pipeline.Inputs{Kustomizations: []string{filepath.Join(root, "apps")}}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Units) != 1 {
		t.Errorf("without AppsRoot nothing is expanded, got %d units", len(res.Units))
	}
	_, err = pipeline.Plan(context.Background(), pipeline.Inputs{Kustomizations: []string{filepath.Join(root, "apps")}, AppsRoot: filepath.Join(root, "nope")}, pipeline.Options{})
	var ue *config.UsageError
	if !errors.As(err, &ue) {
		t.Errorf("an AppsRoot that is no directory must be a usage error, got %v", err)
	}
}

func TestExpandMissingSourceIsNoVerdict(t *testing.T) {
	root := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"apps/app.yaml": application("gone", "envs/gone", "shop"),
	})
	res, err := pipeline.Run(context.Background(), pipeline.Inputs{Files: []string{filepath.Join(root, "apps/app.yaml")}, AppsRoot: root, RepoURLs: []string{repoURL}}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := byType[*pipeline.AppSource](res)
	if len(src) != 1 || src[0].Err == nil || !strings.Contains(src[0].Err.Error(), `Application argocd/gone spec.source: spec.source.path "envs/gone"`) {
		t.Fatalf("a missing source must be a unit with an error naming the Application, got %v", src)
	}
	if res.Report().Verdict(false) != finding.VerdictNoVerdict {
		t.Error("the run must be no verdict")
	}
}

// TestSelftestOverThePlan: selftest is one function over the plan; each
// unit gets the rules' mutants, and the ApplicationSet unit its own (an
// element with a wrong namespace), which argocd-destination-namespace
// stops.
func TestSelftestOverThePlan(t *testing.T) {
	root := shopWith(t, "shop-staging")
	in := pipeline.Inputs{Kustomizations: []string{filepath.Join(root, "apps")}, AppsRoot: root, RepoURLs: []string{repoURL}}
	res, err := pipeline.Plan(context.Background(), in, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	inputs := res.Selftest(context.Background())
	if len(inputs) != len(res.Units) {
		t.Fatalf("want one selftest input per unit, got %d for %d", len(inputs), len(res.Units))
	}
	var found bool
	for _, in := range inputs {
		if in.Input != "ApplicationSet argocd/shop" {
			continue
		}
		if in.Baseline != pipeline.BaselinePass {
			t.Fatalf("the ApplicationSet's baseline: %s %s %v", in.Baseline, in.Error, in.Findings)
		}
		for _, row := range in.Mutants {
			if strings.HasPrefix(row.Mutant, "an ApplicationSet list element with a wrong namespace (spec.generators[0].list.elements[") {
				found = true
				if row.Got != "fail" || row.Input != in.Input {
					t.Errorf("the ApplicationSet mutant must be stopped: %+v", row)
				}
			}
		}
	}
	if !found {
		t.Error("no ApplicationSet mutant row")
	}
}

// TestExpandListMetadataIsNoVerdict: an object whose metadata is a list, in
// an Application's source or as the Application itself, is no verdict
// naming the file and line; annotations written as a list are the
// object's schema error (kyaml's metadata readers, which the expansion
// calls, panicked on both: the gate crashed); beside them, the same tree
// with a well-formed object passes.
func TestExpandListMetadataIsNoVerdict(t *testing.T) {
	const listMetadata = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  -\n"
	good := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}\ndata: {a: b}\n"
	badApp := strings.Replace(application("bad", "envs/prod", "shop"), "metadata: {name: bad, namespace: argocd}", "metadata:\n  -", 1)
	annotated := strings.Replace(application("prod", "envs/prod", "shop"), "metadata: {name: prod, namespace: argocd}", "metadata: {name: prod, namespace: argocd, annotations: [x]}", 1)
	for _, tc := range []struct {
		name, app, source, says string
		schema                  bool // a schema error, exit 1, not no verdict
	}{
		{"source", application("prod", "envs/prod", "shop"), listMetadata, "envs/prod/bad.yaml: document 1 (counting from 1): line 4: metadata is a list", false},
		{"application", badApp, good, "apps/app.yaml: document 1 (counting from 1): line 4: metadata is a list", false},
		{"source, through an alias", application("prod", "envs/prod", "shop"), "apiVersion: v1\nkind: ConfigMap\nx: &m [a]\nmetadata: *m\n", "envs/prod/bad.yaml: document 1 (counting from 1): line 3: metadata is a list", false},
		{"source annotations a list", application("prod", "envs/prod", "shop"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop, annotations: [x]}\n", "", true},
		{"application annotations a list", annotated, good, "", true},
		{"well-formed", application("prod", "envs/prod", "shop"), good, "", false},
	} {
		for _, release := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/release=%v", tc.name, release), func(t *testing.T) {
				root := testutil.WriteFiles(t, t.TempDir(), map[string]string{
					"apps/app.yaml":      tc.app,
					"envs/prod/bad.yaml": tc.source,
				})
				in := pipeline.Inputs{Files: []string{filepath.Join(root, "apps/app.yaml")}, AppsRoot: root, RepoURLs: []string{repoURL}}
				// ReleaseRenders as the plugin runs it: each source checked and
				// summarised as it is rendered.
				res, err := pipeline.Run(context.Background(), in, pipeline.Options{ReleaseRenders: release})
				if tc.says == "" {
					if err != nil {
						t.Fatal(err)
					}
					want := finding.VerdictPass
					if tc.schema {
						want = finding.VerdictFail
					}
					rep := res.Report()
					if v := rep.Verdict(false); v != want {
						t.Fatalf("verdict %s, want %s: %+v", v, want, rep.Findings)
					}
					if tc.schema && !slices.ContainsFunc(rep.Findings, func(f finding.Finding) bool {
						return f.Rule == "schema" && strings.Contains(f.Message, "ObjectMeta.annotations")
					}) {
						t.Errorf("no schema finding on the annotations: %+v", rep.Findings)
					}
					return
				}
				said := ""
				if err != nil {
					said = err.Error()
				} else {
					for _, u := range res.Units {
						if u.Err != nil {
							said += u.Err.Error() + "\n"
						}
					}
					if v := res.Report().Verdict(false); v != finding.VerdictNoVerdict {
						t.Errorf("verdict %s, want no verdict", v)
					}
				}
				if !strings.Contains(filepath.ToSlash(said), tc.says) {
					t.Errorf("the error does not say %q:\n%s", tc.says, said)
				}
			})
		}
	}
}
