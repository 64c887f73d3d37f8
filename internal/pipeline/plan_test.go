package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// web is a Deployment with an image pinned by digest, or not.
func web(image string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: ` + image + `
        resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 16Mi}}
`
}

// repo is a temp dir that is a repository (it holds .git): the root a
// render's reads are bounded to, bases beside the overlay included.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPlanKustomizationAndFiles(t *testing.T) {
	dir := testutil.WriteFiles(t, repo(t), map[string]string{
		"base/kustomization.yaml":          "resources: [web.yaml]\n",
		"base/web.yaml":                    web("ghcr.io/example/web:1.0@" + digest),
		"overlays/prod/kustomization.yaml": "namespace: shop\nresources: [../../base]\nimages: [{name: ghcr.io/example/web, newTag: '2.0'}]\n",
		"raw/a.yaml":                       web("ghcr.io/example/a:1"),
		"raw/b.yaml":                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	})
	overlay := filepath.Join(dir, "overlays/prod")
	res, err := pipeline.Plan(context.Background(), pipeline.Inputs{
		Kustomizations: []string{overlay},
		Files:          []string{filepath.Join(dir, "raw/a.yaml"), filepath.Join(dir, "raw/b.yaml")},
	}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Units) != 2 {
		t.Fatalf("want a -k unit and a -f unit, got %d", len(res.Units))
	}
	k, ok := res.Units[0].Source.(*pipeline.Kustomization)
	if !ok || k.Dir != overlay || res.Units[0].Input() != "-k "+overlay {
		t.Errorf("unit 0: want the kustomization %s, got %#v (%s)", overlay, res.Units[0].Source, res.Units[0].Input())
	}
	if u := res.Units[0]; u.Err != nil || len(u.Resources) != 1 || u.Resources[0].GetNamespace() != "shop" {
		t.Errorf("unit 0: want the overlay's one Deployment in namespace shop, got %d objects, err %v", len(u.Resources), u.Err)
	}
	read := res.Units[0].FilesRead()
	for _, want := range []string{"base/web.yaml", "overlays/prod/kustomization.yaml"} {
		if !slices.ContainsFunc(read, func(f string) bool { return strings.HasSuffix(filepath.ToSlash(f), want) }) {
			t.Errorf("FilesRead: want %s among %v", want, read)
		}
	}
	f, ok := res.Units[1].Source.(*pipeline.Files)
	if !ok || len(f.Paths) != 2 || len(res.Units[1].Resources) != 2 {
		t.Errorf("unit 1: want both -f files as one unit of 2 objects, got %#v with %d", res.Units[1].Source, len(res.Units[1].Resources))
	}
	if res.Units[1].FilesRead() != nil {
		t.Errorf("a -f unit carries no origin annotations, got FilesRead %v", res.Units[1].FilesRead())
	}
	if res.Units[0].Report != nil {
		t.Error("Plan must not check")
	}
}

func TestPlanFailedRenderKeepsItsError(t *testing.T) {
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"bad/kustomization.yaml":  "resources: [missing.yaml]\n",
		"good/kustomization.yaml": "resources: [web.yaml]\n",
		"good/web.yaml":           web("ghcr.io/example/web:1@" + digest),
	})
	res, err := pipeline.Run(context.Background(), pipeline.Inputs{Kustomizations: []string{filepath.Join(dir, "bad"), filepath.Join(dir, "good")}}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Units[0].Err == nil || !strings.Contains(res.Units[0].Err.Error(), "missing.yaml") {
		t.Errorf("the failed render must keep its error naming the file, got %v", res.Units[0].Err)
	}
	if res.Units[1].Err != nil || res.Units[1].Report == nil {
		t.Errorf("the good unit must still be checked, got err %v", res.Units[1].Err)
	}
	if rep := res.Report(); len(rep.Failures) != 1 || rep.Verdict(false) != finding.VerdictNoVerdict {
		t.Errorf("the run's report must be no verdict with one failure, got %v", rep.Failures)
	}
}

func TestPlanFilesOnAKustomizationIsAUsageError(t *testing.T) {
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"kustomization.yaml": "resources: [web.yaml]\n",
		"web.yaml":           web("ghcr.io/example/web:1@" + digest),
	})
	_, err := pipeline.Plan(context.Background(), pipeline.Inputs{Files: []string{dir}}, pipeline.Options{})
	var ue *config.UsageError
	if err == nil || !errorsAs(err, &ue) {
		t.Fatalf("-f on a kustomization root must be a usage error, got %v", err)
	}
}

func TestRunBlamesTheOverlayAndNamesTheInput(t *testing.T) {
	dir := testutil.WriteFiles(t, repo(t), map[string]string{
		"base/kustomization.yaml":          "resources: [web.yaml]\n",
		"base/web.yaml":                    web("ghcr.io/example/web:1.0@" + digest),
		"overlays/prod/kustomization.yaml": "resources: [../../base]\npatches: [{path: patch.yaml}]\n",
		"overlays/prod/patch.yaml":         "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: ghcr.io/example/web:2.0\n",
	})
	overlay := filepath.Join(dir, "overlays/prod")
	res, err := pipeline.Run(context.Background(), pipeline.Inputs{Kustomizations: []string{overlay}}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := res.Units[0]
	if u.Err != nil {
		t.Fatal(u.Err)
	}
	var found bool
	for _, f := range u.Report.Findings {
		if f.Rule != "image-digest" {
			continue
		}
		found = true
		if f.File == nil || !strings.HasSuffix(f.File.Path, "patch.yaml") || f.File.Line == 0 {
			t.Errorf("image-digest must be blamed on the overlay's patch with a line, got %+v", f.File)
		}
		if f.Input != "-k "+overlay {
			t.Errorf("input: want -k %s, got %q", overlay, f.Input)
		}
	}
	if !found {
		t.Fatalf("want image-digest on the patched tag, got %v", u.Report.Findings)
	}
	if len(res.Configs) != 1 || res.Configs[0].String() != "built-in defaults" || u.Config != "built-in defaults" {
		t.Errorf("configs: want the built-in defaults, got %v / %q", res.Configs, u.Config)
	}
}

func TestRunInTreeGateAndFlagsDecide(t *testing.T) {
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"kustomization.yaml": "resources: [web.yaml]\nvalidators: [gate.yaml]\n",
		"gate.yaml":          "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: strict, annotations: {config.kubernetes.io/function: '{exec: {path: gate-fn}}'}}\nspec: {failOn: warning}\n",
		"web.yaml":           web("ghcr.io/example/web:1@" + digest),
	})
	flagged := false
	res, err := pipeline.Run(context.Background(), pipeline.Inputs{Kustomizations: []string{dir}}, pipeline.Options{
		Flags:       func(s *config.Spec) error { flagged = true; return s.Validate() },
		FlagsDecide: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Units[0].Err != nil {
		t.Fatal(res.Units[0].Err)
	}
	if !flagged || !res.FailOnWarning {
		t.Errorf("want the flags applied and the in-tree failOn: warning seen, got flags %v, failOnWarning %v", flagged, res.FailOnWarning)
	}
	if want := "built-in defaults + in-tree Gate strict (may only tighten it) + flags"; res.Configs[0].String() != want {
		t.Errorf("configs: want %q, got %q", want, res.Configs[0])
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// A rule's finding about a field of a kustomize render that no value
// blames (a canary without steps) names the line of that field in the
// base, through kustomize's origin annotation and the overlay's namePrefix:
// it named the file alone, and SARIF put it at line 1.
func TestRunPlacesRenderFindingsOnTheirLine(t *testing.T) {
	const rollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: ghcr.io/example/web:1.0@` + digest + `
  strategy:
    canary: {}
`
	dir := testutil.WriteFiles(t, repo(t), map[string]string{
		"base/kustomization.yaml":          "resources: [rollout.yaml]\n",
		"base/rollout.yaml":                rollout,
		"overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: prod-\n",
	})
	res, err := pipeline.Run(context.Background(), pipeline.Inputs{Kustomizations: []string{filepath.Join(dir, "overlays/prod")}}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Units[0]; u.Err != nil {
		t.Fatal(u.Err)
	}
	var found bool
	for _, f := range res.Units[0].Report.Findings {
		if f.Rule != "rollout-canary-pause" {
			continue
		}
		found = true
		if f.File == nil || !strings.HasSuffix(f.File.Path, "base/rollout.yaml") || f.File.Line != 17 {
			t.Errorf("rollout-canary-pause must name base/rollout.yaml:17 (canary:), got %+v", f.File)
		}
	}
	if !found {
		t.Fatalf("want rollout-canary-pause, got %v", res.Units[0].Report.Findings)
	}
}

// TestPlanSameInputOnce: an input given twice, however spelled (`-k ./a -k
// a/`, a symlink to it; `-f x.yaml -f ./x.yaml`), is rendered and reported
// once, in the order given: every finding was reported twice, and a -f
// file read twice held each object twice.
func TestPlanSameInputOnce(t *testing.T) {
	dir := testutil.WriteFiles(t, repo(t), map[string]string{
		"a/kustomization.yaml": "resources: [web.yaml]\n",
		"a/web.yaml":           web("ghcr.io/example/web:1.0"),
		"b/kustomization.yaml": "resources: [../a]\nnamePrefix: b-\n",
		"raw/x.yaml":           web("ghcr.io/example/x:1"),
	})
	if err := os.Symlink("a", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	res, err := pipeline.Run(context.Background(), pipeline.Inputs{
		Kustomizations: []string{"./a", "b", "a/", "link", filepath.Join(dir, "a"), "b/."},
		Files:          []string{"raw/x.yaml", "./raw/x.yaml", "raw//x.yaml", filepath.Join(dir, "raw", "x.yaml")},
	}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	findings := 0
	for _, u := range res.Units {
		got = append(got, u.Input())
		if u.Err != nil || u.Report == nil {
			t.Fatalf("%s: %v", u.Input(), u.Err)
		}
		findings += len(u.Report.Findings)
	}
	if want := []string{"-k ./a", "-k b", "-f raw/x.yaml"}; !slices.Equal(got, want) {
		t.Errorf("units %q, want %q", got, want)
	}
	if findings != 3 { // image-digest on each of the three Deployments
		t.Errorf("%d findings, want 3", findings)
	}
}

// TestWriteYAMLAsKubectlReadsIt: a render printed for kubectl apply -f
// (render, pin) holds the strings kubectl reads as strings. kustomize reads
// `tier: on` as the string "on" and kustomize build writes it quoted;
// kyaml's encoder wrote it plain, which kubectl (YAML 1.1) reads as the
// boolean true, so `kubectl gate render -k` piped to kubectl sent what the
// gate had not checked.
func TestWriteYAMLAsKubectlReadsIt(t *testing.T) {
	dir := testutil.WriteFiles(t, repo(t), map[string]string{
		"a/kustomization.yaml": "resources: [cm.yaml]\n",
		"a/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {tier: on, on: x}\ndata:\n  a: yes\n  b: \"No\"\n  c: 'off'\n  d: true\n",
	})
	res, err := pipeline.Run(context.Background(), pipeline.Inputs{Kustomizations: []string{filepath.Join(dir, "a")}}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.Units[0].WriteYAML(&b); err != nil {
		t.Fatal(err)
	}
	j, err := sigsyaml.YAMLToJSON(b.Bytes()) // kubectl's decoder
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"labels":{"on":"x","tier":"on"}`, `"data":{"a":"yes","b":"No","c":"off","d":true}`} {
		if !strings.Contains(string(j), want) {
			t.Errorf("kubectl reads %s, want %s in it\n%s", j, want, b.String())
		}
	}
}
