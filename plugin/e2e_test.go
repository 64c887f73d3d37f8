package plugin_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// gate runs the built kubectl-gate binary from the repository root.
func gate(t *testing.T, stdin string, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, testutil.Root(t), stdin, nil, testutil.Bin(t, "kubectl-gate"), args...)
}

func TestE2ECheckOverlays(t *testing.T) {
	cases := []struct {
		dir      string
		code     int
		contains []string
	}{
		// base says web:latest, prod pins it by digest: a grep fails, the gate passes.
		{"examples/overlays/prod", 0, []string{"PASS: 3 resource(s)"}},
		// base is clean, the overlay re-tags worker to latest: the gate stops it
		// and names the overlay's kustomization as the source.
		{"examples/overlays/prod-retag", 1, []string{
			"Deployment/worker (ns shop-prod)\n  ERROR [image-digest] spec.template.spec.containers[0].image",
			"image set by examples/overlays/prod-retag/kustomization.yaml `images:`",
		}},
		{"examples/overlays/staging", 1, []string{`"ghcr.io/example-shop/web:1.5.0-rc.1" is not pinned by digest`}},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			r := gate(t, "", "check", "-k", c.dir)
			if r.Code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, c.code, r.Stdout, r.Stderr)
			}
			for _, s := range c.contains {
				if !says(r.Stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.Stdout)
				}
			}
		})
	}
}

func TestE2EPipeFromKustomizeCLI(t *testing.T) {
	kustomize := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	root := testutil.Root(t)
	for dir, want := range map[string]int{"examples/overlays/prod": 0, "examples/overlays/prod-retag": 1} {
		b := testutil.Run(t, root, "", nil, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
		if dir == "examples/overlays/prod-retag" {
			// The validator itself stops this build; render without it to
			// test the pipe.
			b = testutil.Run(t, root, "", nil, kustomize, "build", filepath.Join(dir, "..", "..", "base"))
			b.Stdout = strings.ReplaceAll(b.Stdout, "worker:2.0.1@sha256:", "worker:latest#")
			b.Stdout = strings.ReplaceAll(b.Stdout, "web:latest", "web:1.4.2@sha256:"+strings.Repeat("a", 64))
		}
		if b.Code != 0 {
			t.Fatalf("kustomize build %s: exit %d: %s", dir, b.Code, b.Stderr)
		}
		r := gate(t, b.Stdout, "check", "-f", "-")
		if r.Code == 3 || (r.Code == 0) != (want == 0) {
			t.Errorf("%s | check -f -: exit %d, want %d\n%s%s", dir, r.Code, want, r.Stdout, r.Stderr)
		}
	}
}

func TestE2EKubectlDispatchesToPlugin(t *testing.T) {
	kubectl := testutil.Tool(t, "KUBECTL", "kubectl")
	bin := filepath.Dir(testutil.Bin(t, "kubectl-gate"))
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	root := testutil.Root(t)
	good := testutil.Run(t, root, "", env, kubectl, "gate", "check", "-k", "examples/overlays/prod")
	bad := testutil.Run(t, root, "", env, kubectl, "gate", "check", "-k", "examples/overlays/prod-retag")
	if good.Code != 0 || bad.Code != 1 {
		t.Fatalf("kubectl gate check: good exit %d, bad exit %d, want 0 and 1\n%s%s", good.Code, bad.Code, bad.Stdout, bad.Stderr)
	}
	if !strings.Contains(bad.Stdout, "[image-digest]") {
		t.Errorf("kubectl gate output lacks the finding:\n%s", bad.Stdout)
	}
}

func TestE2EFailClosed(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty")
	write(t, filepath.Join(empty, "kustomization.yaml"), "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n")
	typo := filepath.Join(tmp, "typo.yaml")
	write(t, typo, "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec:\n  rules:\n    image-digset: off\n")
	unknownField := filepath.Join(tmp, "field.yaml")
	write(t, unknownField, "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec:\n  images:\n    digests: off\n")
	broken := filepath.Join(tmp, "broken")
	write(t, filepath.Join(broken, "kustomization.yaml"), "resources:\n  - missing.yaml\n")
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
		says  string
	}{
		{"empty render", "", []string{"check", "-k", empty}, 1, "[render-empty]"},
		{"missing overlay dir", "", []string{"check", "-k", filepath.Join(tmp, "nope")}, 3, "nope"},
		{"render error", "", []string{"check", "-k", broken}, 3, "missing.yaml"},
		{"malformed YAML on stdin", "kind: Deployment\nmetadata: {name: [\n", []string{"check", "-f", "-"}, 3, "<stdin>"},
		{"empty stdin", "", []string{"check", "-f", "-"}, 3, "no input"},
		{"misspelt rule id", "", []string{"check", "-k", "examples/overlays/prod", "--config", typo}, 2, "spec.rules.image-digset: unknown rule id"},
		{"unknown config field", "", []string{"check", "-k", "examples/overlays/prod", "--config", unknownField}, 2, `unknown field "spec.images.digests"`},
		{"bad flag", "", []string{"check", "--nope"}, 2, "unknown flag"},
		{"no input", "", []string{"check"}, 2, "no input"},
		{"unknown command", "", []string{"chekc"}, 2, "unknown command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := gate(t, c.stdin, c.args...)
			if r.Code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, c.code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout+r.Stderr, c.says) {
				t.Errorf("output does not say %q:\n%s%s", c.says, r.Stdout, r.Stderr)
			}
		})
	}
}

func TestE2EJSONShape(t *testing.T) {
	r := gate(t, "", "check", "-k", "examples/overlays/prod-retag", "-o", "json", "--config", "examples/helm/gate.yaml", "--rule", "image-registry=error")
	if r.Code != 1 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	var doc struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Results    []map[string]any `json:"results"`
		Summary    map[string]any   `json:"summary"`
		Config     []struct {
			Summary string `json:"summary"`
			Sources []struct {
				Source  string   `json:"source"`
				Path    string   `json:"path"`
				Kind    string   `json:"kind"`
				Name    string   `json:"name"`
				Role    string   `json:"role"`
				Sets    []string `json:"sets"`
				Ignored []string `json:"ignored"`
			} `json:"sources"`
			Inputs []string `json:"inputs"`
		} `json:"config"`
		RulesRun []string `json:"rulesRun"`
	}
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decoding %s: %v", r.Stdout, err)
	}
	if doc.APIVersion != report.APIVersion || doc.Kind != "Report" || !slices.Contains(doc.RulesRun, "image-digest") {
		t.Errorf("apiVersion %q, kind %q, rulesRun %q", doc.APIVersion, doc.Kind, doc.RulesRun)
	}
	// config: one configuration, layer by layer: the file, the overlay's
	// own Gate (which may only tighten it), the flags; and its input.
	if len(doc.Config) != 1 {
		t.Fatalf("config = %+v, want one entry", doc.Config)
	}
	c := doc.Config[0]
	if want := "--config examples/helm/gate.yaml + in-tree Gate prod (may only tighten it) + flags"; c.Summary != want {
		t.Errorf("config summary %q, want %q", c.Summary, want)
	}
	if len(c.Sources) != 3 || !slices.Equal(c.Inputs, []string{"-k examples/overlays/prod-retag"}) {
		t.Fatalf("config = %+v, want three sources and the input", c)
	}
	if s := c.Sources[0]; s.Source != "file" || s.Path != "examples/helm/gate.yaml" || s.Role != "base" || !slices.Equal(s.Sets, []string{"schema.ignoreMissing"}) {
		t.Errorf("sources[0] = %+v, want the file as the base with what it sets", s)
	}
	if s := c.Sources[1]; s.Source != "in-tree" || s.Kind != "Gate" || s.Name != "prod" || s.Role != "tighten" ||
		!slices.Equal(s.Sets, []string{"images.allowedRegistries", "render.minResources"}) {
		t.Errorf("sources[1] = %+v, want the overlay's Gate prod, tightening, with what its spec sets", s)
	}
	if s := c.Sources[2]; s.Source != "flags" || s.Role != "override" || !slices.Equal(s.Sets, []string{"--rule"}) {
		t.Errorf("sources[2] = %+v, want the flags naming --rule", s)
	}
	want := map[string]any{"resources": 3.0, "errors": 2.0, "warnings": 0.0, "verdict": "fail"}
	for k, v := range want {
		if doc.Summary[k] != v {
			t.Errorf("summary.%s = %v, want %v", k, doc.Summary[k], v)
		}
	}
	f := doc.Results[0]
	for _, k := range []string{"rule", "severity", "message", "resourceRef", "field", "file"} {
		if _, ok := f[k]; !ok {
			t.Errorf("result lacks %q: %v", k, f)
		}
	}
	ref := f["resourceRef"].(map[string]any)
	if ref["apiVersion"] != "apps/v1" || ref["kind"] != "Deployment" || ref["name"] != "worker" || ref["namespace"] != "shop-prod" {
		t.Errorf("resourceRef = %v", ref)
	}
	if file := f["file"].(map[string]any); file["path"] != "examples/overlays/prod-retag/kustomization.yaml" {
		t.Errorf("file = %v", file)
	}
	if field := f["field"].(map[string]any); field["currentValue"] != "ghcr.io/example-shop/worker:latest" {
		t.Errorf("field = %v", field)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// says: testutil.Says.
func says(out, want string) bool { return testutil.Says(out, want) }

// TestE2EUsageErrorPrintsNoVerdict: a --crd the gate cannot read is a usage
// error (exit 2) that says what to fix on stderr; it prints no report and
// no verdict header, as a bad flag does not (issue 23).
func TestE2EUsageErrorPrintsNoVerdict(t *testing.T) {
	for _, crd := range []string{"no/such/crds", "README.md"} {
		r := gate(t, "", "check", "-k", "examples/overlays/prod", "-k", "examples/overlays/staging", "--crd", crd)
		if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "--crd / schema.crds: reading CRDs from "+crd) ||
			strings.Count(r.Stderr, "reading CRDs from") != 1 || strings.Contains(strings.ToUpper(r.Stderr), "VERDICT") {
			t.Errorf("--crd %s: exit %d, want 2 with the error once on stderr and no report\nstdout:\n%s\nstderr:\n%s", crd, r.Code, r.Stdout, r.Stderr)
		}
	}
	// render (the Argo CD plugin's generate) the same: nothing on stdout.
	r := gate(t, "", "render", "-k", "examples/overlays/prod", "--crd", "no/such/crds")
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "reading CRDs from no/such/crds") || strings.Contains(strings.ToUpper(r.Stderr), "VERDICT") {
		t.Errorf("render --crd: exit %d, want 2 with the error on stderr and no report\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
