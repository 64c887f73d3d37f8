package plugin_test

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// Issue 10: nothing the gate did not see may pass. Each case ran green
// before (the exit code it had is in the comment) and is checked here on the
// built binary, with the case where the gate is right to pass beside it.

const pinnedDigest = "sha256:4315c8fd5a82533f56a83922bc1d5a2cff2b1f1e76117f66673abbcffd6c9fff"

const experiment = `apiVersion: argoproj.io/v1alpha1
kind: Experiment
metadata: {name: canary-check, namespace: shop}
spec:
  duration: 10m
  templates:
  - name: canary
    replicas: 1
    selector: {matchLabels: {app: web, variant: canary}}
    template:
      metadata: {labels: {app: web, variant: canary}}
      spec:
        containers: [{name: web, image: "ghcr.io/example-shop/web:IMAGE"}]
`

const analysisJob = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: smoke, namespace: shop}
spec:
  metrics:
  - name: smoke
    provider:
      job:
        spec:
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers: [{name: smoke, image: "curlimages/curl:IMAGE", args: [http://web/healthz]}]
`

func TestE2EImagesEverywhere(t *testing.T) {
	for name, doc := range map[string]string{"Experiment": experiment, "AnalysisTemplate job": analysisJob} {
		t.Run(name, func(t *testing.T) {
			// Before: exit 0, the tag was never seen.
			r := gate(t, strings.ReplaceAll(doc, "IMAGE", "latest"), "check", "-f", "-")
			if r.Code != 1 || !strings.Contains(r.Stdout, "[image-digest]") {
				t.Errorf("a tag in an %s: exit %d, want 1\n%s%s", name, r.Code, r.Stdout, r.Stderr)
			}
			r = gate(t, strings.ReplaceAll(doc, "IMAGE", "8.11@"+pinnedDigest), "check", "-f", "-")
			if r.Code != 0 {
				t.Errorf("pinned %s: exit %d, want 0\n%s%s", name, r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}

func TestE2EPodSpecPathListSyntax(t *testing.T) {
	dir := t.TempDir()
	// A made-up kind with no CRD: the configs allow it (schema.ignoreMissing).
	batch := "apiVersion: batch.example.com/v1\nkind: Batch\nmetadata: {name: nightly}\nspec:\n  groups:\n  - pods: {containers: [{name: a, image: \"a:1\"}]}\n"
	cfg := func(path string) string {
		return testutil.WriteFiles(t, dir, map[string]string{path + ".yaml": "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec:\n  schema: {ignoreMissing: [batch.example.com/Batch]}\n  images:\n    podSpecPaths: [{kind: Batch, path: \"" + path + "\"}]\n"})
	}
	cfg("spec.groups[].pods")
	cfg("spec.groups.pods")
	// The walk finds the nested container without configuration.
	if r := gate(t, batch, "check", "-f", "-"); r.Code != 1 || !strings.Contains(r.Stdout, "spec.groups[0].pods.containers[0].image") {
		t.Errorf("nested pod spec: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Before: the list path was accepted and matched nothing, silently.
	r := gate(t, batch, "check", "-f", "-", "--config", filepath.Join(dir, "spec.groups.pods.yaml"), "--rule", "image-digest=off")
	if r.Code != 0 || !strings.Contains(r.Stdout, "WARNING [image-podspec-path]") {
		t.Errorf("unmatched path: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := gate(t, batch, "check", "-f", "-", "--config", filepath.Join(dir, "spec.groups.pods.yaml"), "--rule", "image-digest=off", "--fail-on", "warning"); r.Code != 1 {
		t.Errorf("unmatched path with --fail-on warning: exit %d", r.Code)
	}
	r = gate(t, batch, "check", "-f", "-", "--config", filepath.Join(dir, "spec.groups[].pods.yaml"), "--rule", "image-digest=off")
	if r.Code != 0 || strings.Contains(r.Stdout, "WARNING") {
		t.Errorf("list path: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestE2EInputShapes(t *testing.T) {
	// A repository (.git): the root -k reads its ../base in.
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		".git/HEAD":                  "ref: refs/heads/main\n",
		"base/kustomization.yaml":    "resources: [web.yaml]\n",
		"base/web.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
		"overlay/kustomization.yaml": "resources: [../base]\npatches: [{path: patch.yaml}]\n",
		"overlay/patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n",
		"fragment.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\ndata: {a: b}\n",
		// -R over a tree with a nested root: the root is rendered (its
		// patch applied), not read raw.
		"tree/cm.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n",
		"tree/app/kustomization.yaml": "resources: [web.yaml]\npatches: [{path: patch.yaml}]\n",
		"tree/app/web.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
		"tree/app/patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n",
	})
	overlay := filepath.Join(dir, "overlay")
	cases := []struct {
		name string
		args []string
		code int
		says string
	}{
		// Before: exit 0, the patch was checked as a resource.
		{"-f on a kustomization root", []string{"-f", overlay}, 2, "use -k " + overlay},
		{"-f on a kustomization file", []string{"-f", filepath.Join(overlay, "kustomization.yaml")}, 2, "use -k " + overlay},
		{"-f -R over nested kustomization roots renders them", []string{"-f", filepath.Join(dir, "tree"), "-R"}, 0, "PASS: 2 resource(s)"},
		{"-f -R on a kustomization root itself", []string{"-f", overlay, "-R"}, 2, "use -k " + overlay},
		{"a document without apiVersion and kind", []string{"-f", filepath.Join(dir, "fragment.yaml")}, 3, "fragment.yaml: document 2 (counting from 1): not a Kubernetes object"},
		{"-k on the same directory", []string{"-k", overlay}, 0, "PASS: 1 resource(s)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := gate(t, "", append([]string{"check"}, c.args...)...)
			if r.Code != c.code || !strings.Contains(r.Stdout+r.Stderr, c.says) {
				t.Errorf("exit %d, want %d saying %q\n%s%s", r.Code, c.code, c.says, r.Stdout, r.Stderr)
			}
		})
	}
	// A Kustomization object piped in is not a resource either.
	r := gate(t, "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n", "check", "-f", "-")
	if r.Code != 2 || !strings.Contains(r.Stderr, "kustomize configuration") {
		t.Errorf("a Kustomization on stdin: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestE2ENoVerdictInEveryFormat: with exit 3, no output format may read as
// a pass. Before: junit showed every test passing, sarif had empty results
// and no failed invocation, github printed nothing.
func TestE2ENoVerdictInEveryFormat(t *testing.T) {
	broken := testutil.WriteFiles(t, t.TempDir(), map[string]string{"kustomization.yaml": "resources: [missing.yaml]\n"})
	for _, format := range []string{"text", "json", "yaml", "sarif", "junit", "github"} {
		t.Run(format, func(t *testing.T) {
			r := gate(t, "", "check", "-k", broken, "-o", format)
			if r.Code != 3 {
				t.Fatalf("exit %d, want 3\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			out := r.Stdout
			ok := false
			switch format {
			case "text":
				ok = strings.Contains(out, "NO VERDICT: ") && strings.Contains(out, "missing.yaml") && !strings.Contains(out, "PASS")
			case "json":
				var doc struct {
					Summary  struct{ Verdict string }
					Failures []string
				}
				ok = json.Unmarshal([]byte(out), &doc) == nil && doc.Summary.Verdict == "no-verdict" && len(doc.Failures) == 1
			case "yaml":
				ok = strings.Contains(out, "verdict: no-verdict")
			case "sarif":
				var doc struct {
					Runs []struct {
						Invocations []struct {
							ExecutionSuccessful        bool `json:"executionSuccessful"`
							ToolExecutionNotifications []struct {
								Message struct{ Text string }
							} `json:"toolExecutionNotifications"`
						} `json:"invocations"`
					} `json:"runs"`
				}
				ok = json.Unmarshal([]byte(out), &doc) == nil && len(doc.Runs[0].Invocations) == 1 &&
					!doc.Runs[0].Invocations[0].ExecutionSuccessful &&
					strings.Contains(doc.Runs[0].Invocations[0].ToolExecutionNotifications[0].Message.Text, "missing.yaml")
			case "junit":
				var suite struct {
					Errors int `xml:"errors,attr"`
				}
				ok = xml.Unmarshal([]byte(out), &suite) == nil && suite.Errors == 1 && strings.Contains(out, `<error message="no verdict: `)
			case "github":
				ok = strings.HasPrefix(out, "::error title=kubectl-gate no verdict::NO VERDICT: ") && strings.Contains(out, "missing.yaml")
			}
			if !ok {
				t.Errorf("-o %s reads as a pass or hides the cause:\n%s", format, out)
			}
		})
	}
}

// TestE2EFindingsNameTheirInput: with several -k, identical findings were
// identical lines; each now names its overlay, in text and json.
func TestE2EFindingsNameTheirInput(t *testing.T) {
	r := gate(t, "", "check", "-k", "examples/overlays/prod-retag", "-k", "examples/overlays/staging", "-o", "json")
	var doc struct {
		Results []struct {
			Rule  string
			Input string
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 1 {
		t.Fatalf("exit %d, %v\n%s", r.Code, err, r.Stdout)
	}
	seen := map[string]bool{}
	for _, f := range doc.Results {
		if f.Input == "" {
			t.Errorf("finding %s names no input", f.Rule)
		}
		seen[f.Input] = true
	}
	if !seen["-k examples/overlays/prod-retag"] || !seen["-k examples/overlays/staging"] {
		t.Errorf("inputs named: %v", seen)
	}
	text := gate(t, "", "check", "-k", "examples/overlays/staging")
	if !strings.Contains(text.Stdout, "== -k examples/overlays/staging: ") {
		t.Errorf("text names no input:\n%s", text.Stdout)
	}
}

// TestE2EWriteKustomizationNamesWhatFailed: under a registry failure, pin
// --write-kustomization printed only "some images could not be resolved".
// Now the image-resolve findings are printed and the causes grouped: one
// line per cause with its count and references.
func TestE2EWriteKustomizationNamesWhatFailed(t *testing.T) {
	reg := testutil.StartRegistry(t)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kustomization.yaml"), "resources: [web.yaml]\n")
	write(t, filepath.Join(dir, "web.yaml"), workloads(1, reg.Host+"/shop/web:1.5.0", reg.Host+"/shop/worker:2.0.1", reg.Host+"/shop/web:1.5.0"))
	reg.Wrap = func(w http.ResponseWriter, _ *http.Request, _ http.Handler) { w.WriteHeader(503) }
	r := gate(t, "", "pin", "--write-kustomization", dir, "--insecure-registry", reg.Host, "--timeout", "2s")
	if r.Code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.Code, r.Stderr)
	}
	for _, want := range []string{
		"[image-resolve]", "== --write-kustomization " + dir + ": ",
		"2 image reference(s) could not be resolved", "\n  2× ", reg.Host + "/shop/web:1.5.0, " + reg.Host + "/shop/worker:2.0.1",
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "some images could not be resolved") {
		t.Errorf("the old message without causes:\n%s", r.Stderr)
	}
}

// TestE2EBlameNamesTheOverlayPatch: when an overlay's patch sets the image,
// the finding blamed the base file it overrode. Now it names the patch that
// set the value, and its line, for each kind of patch.
func TestE2EBlameNamesTheOverlayPatch(t *testing.T) {
	base := map[string]string{
		"base/kustomization.yaml": "resources: [web.yaml]\n",
		"base/web.yaml":           "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: ghcr.io/shop/web:1.4@" + pinnedDigest + "\n",
	}
	cases := map[string]struct {
		files map[string]string
		file  string
		line  int
	}{
		"strategic merge patch file": {map[string]string{
			"prod/kustomization.yaml": "resources: [../base]\npatches:\n- path: web-image.yaml\n",
			"prod/web-image.yaml":     "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: ghcr.io/shop/web:hotfix\n",
		}, "prod/web-image.yaml", 9},
		"JSON 6902 patch file": {map[string]string{
			"prod/kustomization.yaml":  "resources: [../base]\npatches:\n- path: web-image.json.yaml\n  target: {kind: Deployment, name: web}\n",
			"prod/web-image.json.yaml": "- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: ghcr.io/shop/web:hotfix\n",
		}, "prod/web-image.json.yaml", 3},
		"inline patch": {map[string]string{
			"prod/kustomization.yaml": "resources: [../base]\npatches:\n- target: {kind: Deployment, name: web}\n  patch: |\n    - op: replace\n      path: /spec/template/spec/containers/0/image\n      value: ghcr.io/shop/web:hotfix\n",
		}, "prod/kustomization.yaml", 7},
		"a component's patch": {map[string]string{
			"prod/kustomization.yaml":   "resources: [../base]\ncomponents: [../hotfix]\n",
			"hotfix/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: image.yaml\n",
			"hotfix/image.yaml":         "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - {name: web, image: \"ghcr.io/shop/web:hotfix\"}\n",
		}, "hotfix/image.yaml", 8},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			testutil.WriteFiles(t, dir, base)
			testutil.WriteFiles(t, dir, c.files)
			r := testutil.Run(t, dir, "", nil, testutil.Bin(t, "kubectl-gate"), "check", "-k", "prod", "-o", "json")
			var doc struct {
				Results []struct {
					Rule string
					File struct {
						Path string
						Line int
					}
				}
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 1 || len(doc.Results) != 1 {
				t.Fatalf("exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
			}
			if got := doc.Results[0].File; got.Path != c.file || got.Line != c.line {
				t.Errorf("blamed %s:%d, want %s:%d\n%s", got.Path, got.Line, c.file, c.line, r.Stdout)
			}
			gh := testutil.Run(t, dir, "", nil, testutil.Bin(t, "kubectl-gate"), "check", "-k", "prod", "-o", "github")
			if want := "file=" + c.file + ",line=" + strconv.Itoa(c.line) + ","; !strings.Contains(gh.Stdout, want) {
				t.Errorf("github lacks %q:\n%s", want, gh.Stdout)
			}
		})
	}
	// The base is blamed, with its line, when it set the value.
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"kustomization.yaml": "resources: [web.yaml]\n",
		"web.yaml":           "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: web\n    image: nginx:latest\n",
	})
	r := testutil.Run(t, dir, "", nil, testutil.Bin(t, "kubectl-gate"), "check", "-k", ".", "-o", "sarif")
	if r.Code != 1 || !strings.Contains(r.Stdout, `"uri": "web.yaml"`) || !strings.Contains(r.Stdout, `"startLine": 7`) {
		t.Errorf("base blame: exit %d\n%s", r.Code, r.Stdout)
	}
}

// TestE2ERolloutReferences: an Experiment naming an AnalysisTemplate that
// is not in the render, and a Rollout whose traffic routing names an
// Ingress that is not in it, passed before.
func TestE2ERolloutReferences(t *testing.T) {
	exp := strings.ReplaceAll(experiment, "IMAGE", "1.4@"+pinnedDigest) + "  analyses: [{name: smoke, templateName: smoke}]\n"
	if r := gate(t, exp, "check", "-f", "-"); r.Code != 1 || !says(r.Stdout, "Experiment/canary-check (ns shop)\n  "+`[rollout-analysis-ref] spec.analyses[0].templateName: AnalysisTemplate "smoke" is not in the render`) {
		t.Errorf("Experiment with a missing template: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := gate(t, exp+"---\n"+strings.ReplaceAll(analysisJob, "IMAGE", "8.11@"+pinnedDigest), "check", "-f", "-"); r.Code != 0 {
		t.Errorf("Experiment with its template: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The canary example names Ingress "checkout": without it, red.
	r := gate(t, "", "check", "-k", "examples/rollouts/canary")
	if r.Code != 0 {
		t.Fatalf("the canary example: exit %d\n%s", r.Code, r.Stdout)
	}
	files := map[string]string{"kustomization.yaml": "namespace: shop\nresources: [rollout.yaml, services.yaml, analysis-templates.yaml]\n"}
	for _, f := range []string{"rollout.yaml", "services.yaml", "analysis-templates.yaml"} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(t), "examples", "rollouts", "canary", f))
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for _, doc := range strings.Split(string(b), "\n---\n") {
			if !strings.Contains(doc, "kind: Ingress") {
				kept = append(kept, doc)
			}
		}
		files[f] = strings.Join(kept, "\n---\n")
	}
	noIngress := testutil.WriteFiles(t, t.TempDir(), files)
	r = gate(t, "", "check", "-k", noIngress)
	if r.Code != 1 || !says(r.Stdout, "Rollout/checkout (ns shop)\n  "+`ERROR [rollout-traffic-ref] spec.strategy.canary.trafficRouting.nginx.stableIngress: trafficRouting names Ingress "checkout"`) {
		t.Errorf("the canary without its Ingress: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
