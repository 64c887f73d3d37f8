package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

const gateYAML = "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec:\n  render: {minResources: 2}\n"
const pinYAML = "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Pin\nmetadata: {name: p}\n"

// tree writes files under a temp dir and returns it.
// tree writes files into a repository (a directory holding .git): the
// root a render's reads are bounded to (fsbound.For).
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return testutil.WriteFiles(t, dir, files)
}

var baseFiles = map[string]string{
	"base/kustomization.yaml": "resources: [cm.yaml]\n",
	"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n",
}

func with(extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range baseFiles {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func TestPlacement(t *testing.T) {
	cases := []struct {
		name     string
		files    map[string]string
		severity finding.Severity
		says     string
		config   string // kind of the config picked for the top level, if any
	}{
		{"gate under validators at the top is right", with(map[string]string{
			"prod/kustomization.yaml": "resources: [../base]\nvalidators: [gate.yaml]\n", "prod/gate.yaml": gateYAML}), "", "", "Gate"},
		{"pin last under transformers is right", with(map[string]string{
			"prod/kustomization.yaml": "resources: [../base]\ntransformers: [pin.yaml]\n", "prod/pin.yaml": pinYAML}), "", "", "Pin"},
		{"inline gate", with(map[string]string{
			"prod/kustomization.yaml": "resources: [../base]\nvalidators:\n- |\n  " + strings.ReplaceAll(gateYAML, "\n", "\n  ") + "\n"}), "", "", "Gate"},
		{"gate under transformers deletes everything", with(map[string]string{
			"prod/kustomization.yaml": "resources: [../base]\ntransformers: [gate.yaml]\n", "prod/gate.yaml": gateYAML}), finding.SeverityError, "under transformers:", ""},
		{"pin under validators is rejected", with(map[string]string{
			"prod/kustomization.yaml": "resources: [../base]\nvalidators: [pin.yaml]\n", "prod/pin.yaml": pinYAML}), finding.SeverityError, "under validators:", ""},
		{"gate in a base sees the base", map[string]string{
			"base/kustomization.yaml": "resources: [cm.yaml]\nvalidators: [gate.yaml]\n", "base/gate.yaml": gateYAML, "base/cm.yaml": baseFiles["base/cm.yaml"],
			"prod/kustomization.yaml": "resources: [../base]\n"}, finding.SeverityWarning, "not in the top-level kustomization", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := tree(t, c.files)
			res, err := Kustomize(filepath.Join(dir, "prod"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Resources) != 1 || res.Resources[0].GetKind() != "ConfigMap" {
				t.Fatalf("render = %d objects, want the ConfigMap only", len(res.Resources))
			}
			if c.says == "" && len(res.Placement) != 0 {
				t.Fatalf("placement findings on a right placement: %+v", res.Placement)
			}
			if c.says != "" && (len(res.Placement) != 1 || res.Placement[0].Severity != c.severity || !strings.Contains(res.Placement[0].Message, c.says)) {
				t.Fatalf("placement = %+v, want one %s saying %q", res.Placement, c.severity, c.says)
			}
			obj, ok := res.Config()
			if (c.config != "") != ok || (ok && obj.Kind != c.config) {
				t.Errorf("Config() = %v %v, want %q", obj, ok, c.config)
			}
		})
	}
}

func TestBadGateConfigInKustomization(t *testing.T) {
	dir := tree(t, with(map[string]string{
		"prod/kustomization.yaml": "resources: [../base]\nvalidators: [gate.yaml]\n",
		"prod/gate.yaml":          "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec:\n  rules: {image-digset: off}\n",
	}))
	_, err := Kustomize(filepath.Join(dir, "prod"), Options{})
	if err == nil || !strings.Contains(err.Error(), "image-digset") || !strings.Contains(err.Error(), "gate.yaml") {
		t.Fatalf("err = %v, want one naming the file and the rule", err)
	}
}

func TestOriginNamesSourceFilesAndIsStripped(t *testing.T) {
	root := testutil.Root(t)
	t.Chdir(root)
	res, err := Kustomize("examples/overlays/prod-retag", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var worker string
	for _, r := range res.Resources {
		if r.GetName() == "worker" {
			worker = r.MustString()
			if f := manifest.SourceFile(r); f == nil || f.Path != "examples/base/worker.yaml" {
				t.Errorf("source file = %+v, want examples/base/worker.yaml", f)
			}
			// the worker's entry of the overlay's images:, on its line
			if k := manifest.ImageSetBy(r, "ghcr.io/example-shop/worker"); k != (manifest.ImageSource{File: "examples/overlays/prod-retag/kustomization.yaml", Line: 14}) {
				t.Errorf("worker image set by %+v", k)
			}
		}
	}
	if worker == "" {
		t.Fatal("no worker in the render")
	}
	// The staging overlay re-tags web only: the worker's image was set by
	// no overlay, so no finding may blame staging's images: for it.
	staging, err := Kustomize("examples/overlays/staging", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range staging.Resources {
		web, worker := manifest.ImageSetBy(r, "ghcr.io/example-shop/web"), manifest.ImageSetBy(r, "ghcr.io/example-shop/worker")
		if worker.File != "" || (r.GetName() == "web" && r.GetKind() == "Deployment" && web != (manifest.ImageSource{File: "examples/overlays/staging/kustomization.yaml", Line: 8})) {
			t.Errorf("%s: web set by %+v, worker by %+v", r.GetName(), web, worker)
		}
	}
	StripBuildAnnotations(res.Resources)
	var b strings.Builder
	if err := (kio.ByteWriter{Writer: &b}).Write(res.Resources); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "config.kubernetes.io/origin") || strings.Contains(b.String(), "transformations") || strings.Contains(b.String(), "kubectl-gate.dev") {
		t.Errorf("build annotations left in output:\n%s", b.String())
	}
}

func TestKustomizeErrors(t *testing.T) {
	if _, err := Kustomize(filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Error("missing dir rendered")
	}
	dir := tree(t, map[string]string{"kustomization.yaml": "resources: [nope.yaml]\n"})
	if _, err := Kustomize(dir, Options{}); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("err = %v", err)
	}
}

func TestFiles(t *testing.T) {
	dir := tree(t, map[string]string{
		"a.yaml":     "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: y}}\n",
		"b.json":     `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}`,
		"sub/c.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\n",
		"notes.txt":  "not yaml: [",
	})
	flat, err := Files([]string{dir}, nil, false, 0)
	if err != nil || len(flat) != 3 {
		t.Fatalf("flat: %d objects, %v", len(flat), err)
	}
	deep, err := Files([]string{dir}, nil, true, 0)
	if err != nil || len(deep) != 4 {
		t.Fatalf("recursive: %d objects, %v", len(deep), err)
	}
	if f := manifest.SourceFile(flat[2]); f == nil || !strings.HasSuffix(f.Path, "b.json") {
		t.Errorf("source of the secret = %+v", f)
	}
	// a directory and a file in it (and the file again, through ./): each
	// file once, as kubectl apply sees one object (it was a render-duplicate)
	again, err := Files([]string{dir, filepath.Join(dir, "b.json"), filepath.Join(dir, ".", "sub", "..", "a.yaml")}, nil, false, 0)
	if err != nil || len(again) != 3 {
		t.Errorf("a directory and files in it: %d objects, want 3, %v", len(again), err)
	}
	bad := tree(t, map[string]string{"x.yaml": "kind: [\n"})
	if _, err := Files([]string{bad}, nil, false, 0); err == nil || !strings.Contains(err.Error(), "x.yaml") {
		t.Errorf("malformed file: err = %v", err)
	}
	if _, err := Files([]string{"-"}, strings.NewReader("  \n"), false, 0); err == nil {
		t.Error("empty stdin read as an empty render")
	}
	if _, err := Files([]string{"-"}, strings.NewReader("foo: bar\n"), false, 0); err == nil {
		t.Error("a document that is not an object was accepted")
	}
}

// Issue 10: -f on a kustomization root read its patches as resources and
// passed. Every shape of it is a usage error that says to use -k.
func TestFilesRefusesKustomizations(t *testing.T) {
	dir := tree(t, map[string]string{
		"overlay/kustomization.yaml": "resources: [../base]\npatches: [{path: patch.yaml}]\n",
		"overlay/patch.yaml":         "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n",
		"tree/raw.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"tree/app/Kustomization":     "resources: [cm.yaml]\n",
		"stream.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
		"builtin.yaml":               "apiVersion: builtin\nkind: ImageTagTransformer\nmetadata: {name: t}\n",
		"fragment.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\nspec:\n  replicas: 3\n",
		"nokind.yaml":                "apiVersion: apps/v1\nmetadata: {name: x}\n",
	})
	var ue *config.UsageError
	for name, c := range map[string]struct {
		path      string
		recursive bool
		usage     bool
		says      string
	}{
		"a kustomization root":                {"overlay", false, true, "use -k " + filepath.ToSlash(filepath.Join(dir, "overlay"))},
		"its kustomization file":              {"overlay/kustomization.yaml", false, true, "use -k"},
		"a root under -R":                     {"tree", true, true, "use -k " + filepath.ToSlash(filepath.Join(dir, "tree", "app"))},
		"a Kustomization object in a stream":  {"stream.yaml", false, true, "document 2 (counting from 1) is kustomize configuration"},
		"a builtin transformer config":        {"builtin.yaml", false, true, "kustomize configuration (builtin ImageTagTransformer)"},
		"a patch fragment without apiVersion": {"fragment.yaml", false, false, "fragment.yaml: document 2 (counting from 1): not a Kubernetes object: it has no apiVersion and kind"},
		"a document without kind":             {"nokind.yaml", false, false, "it has no kind"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Files([]string{filepath.Join(dir, c.path)}, nil, c.recursive, 0)
			if err == nil || !strings.Contains(err.Error(), c.says) || errors.As(err, &ue) != c.usage {
				t.Fatalf("err = %v, want one saying %q (usage error: %v)", err, c.says, c.usage)
			}
		})
	}
	if nodes, err := Files([]string{filepath.Join(dir, "tree")}, nil, false, 0); err != nil || len(nodes) != 1 {
		t.Errorf("without -R the nested root is not read: %d objects, %v", len(nodes), err)
	}
}

// A kustomize refusal that a gate flag lifts names the flag; with the
// flag given, no hint.
func TestKustomizeErrorHints(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
	cases := []struct {
		name  string
		files map[string]string
		opts  Options
		hint  string
	}{
		{"file outside the root", map[string]string{"o/kustomization.yaml": "resources: [../cm.yaml]\n", "cm.yaml": cm}, Options{}, "hint: --load-restrictor LoadRestrictionsNone"},
		{"a KRM function", map[string]string{"o/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [t.yaml]\n", "o/cm.yaml": cm, "o/t.yaml": "apiVersion: x/v1\nkind: T\nmetadata: {name: t}\n"}, Options{}, "hint: --enable-alpha-plugins"},
		{"helmCharts", map[string]string{"o/kustomization.yaml": "helmCharts: [{name: c}]\n"}, Options{}, "hint: --enable-helm"},
		{"no hint with the flag", map[string]string{"o/kustomization.yaml": "helmCharts: [{name: c}]\n"}, Options{EnableHelm: true, HelmCommand: "/nonexistent/helm"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Kustomize(filepath.Join(tree(t, c.files), "o"), c.opts)
			switch {
			case err == nil:
				t.Fatal("rendered; want an error")
			case c.hint == "" && strings.Contains(err.Error(), "hint:"):
				t.Errorf("err = %v, want no hint", err)
			case !strings.Contains(err.Error(), c.hint):
				t.Errorf("err = %v, want %q", err, c.hint)
			}
		})
	}
}

// TestSkippedExecFunctions: with KRM functions on and exec ones off,
// kustomize skips an exec function silently and exits 0 (checked against
// the kustomize CLI by hand: `kustomize build --enable-alpha-plugins` of a
// kustomization whose exec transformer exits 7 prints the untransformed
// render). The gate refuses that render, naming each function and where it
// is listed; with --enable-exec the function runs.
func TestSkippedExecFunctions(t *testing.T) {
	fn := func(name string) string {
		return "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: " + name + "\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.sh\n"
	}
	files := with(map[string]string{
		"base/kustomization.yaml":  "resources: [cm.yaml]\nvalidators:\n- |\n  apiVersion: example.com/v1\n  kind: Check\n  metadata:\n    name: check\n    annotations:\n      config.kubernetes.io/function: |\n        exec:\n          path: ./fn.sh\n",
		"base/fn.sh":               "#!/bin/sh\ncat\n",
		"o/kustomization.yaml":     "resources: [../base]\ntransformers: [fn.yaml, fns]\ngenerators:\n- gen.yaml\n- '{apiVersion: example.com/v1, kind: Gen2, metadata: {name: g2, annotations: {config.kubernetes.io/function: \"exec: {path: ./fn.sh}\"}}}'\n",
		"o/fns/kustomization.yaml": "resources: [fn2.yaml]\n",
		"o/fns/fn2.yaml":           fn("second"),
		"o/fn.yaml":                fn("rename"),
		"o/gen.yaml":               "apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: gen\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example.com/gen:1\n      exec:\n        path: ./fn.sh\n",
		"o/fn.sh":                  "#!/bin/sh\nsed 's/a: b/a: ran/'\n",
	})
	dir := tree(t, files)
	_, err := Kustomize(filepath.Join(dir, "o"), Options{EnableAlphaPlugins: true})
	var skipped *SkippedExecError
	if !errors.As(err, &skipped) {
		t.Fatalf("err = %v, want a SkippedExecError", err)
	}
	got := strings.Join(skipped.Functions, "\n")
	for _, want := range []string{"transformers: fn.yaml in ", "validators: inline in ", "generators: inline in ", "transformers: fns/fn2.yaml in ", "(exec ./fn.sh)", "--enable-exec"} {
		if !strings.Contains(got+err.Error(), want) {
			t.Errorf("err = %v, want it to name %q", err, want)
		}
	}
	if strings.Contains(got, "gen.yaml") {
		t.Errorf("a container function (image set) is not an exec one: %v", err)
	}

	// With exec on, the exec transformer runs. The container generator is
	// left out (no container runtime here), and so is the validator: kustomize
	// hands a validator path annotations that `cat` would hand back.
	files["o/kustomization.yaml"] = "resources: [../base]\ntransformers: [fn.yaml]\n"
	files["base/kustomization.yaml"] = "resources: [cm.yaml]\n"
	dir = tree(t, files)
	for _, f := range []string{"base/fn.sh", "o/fn.sh"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Kustomize(filepath.Join(dir, "o"), Options{EnableAlphaPlugins: true, EnableExec: true})
	if err != nil {
		t.Fatalf("with --enable-exec: %v", err)
	}
	if len(res.Resources) != 1 || res.Resources[0].MustString() == "" || !strings.Contains(res.Resources[0].MustString(), "a: ran") {
		t.Errorf("with --enable-exec the transformer did not run: %v", res.Resources)
	}
}

// TestKustomizeRaisesFloor: rendering raises the heap floor to
// gcfloor.RenderFloor (a render's garbage), and sets none where the user's
// GOGC left the process without one.
func TestKustomizeRaisesFloor(t *testing.T) {
	dir := tree(t, baseFiles)
	testutil.RaisesFloor(t, gcfloor.RenderFloor, func() error {
		_, err := Kustomize(filepath.Join(dir, "base"), Options{})
		return err
	})
}

// No repository holds the kustomization (a tarball, a build context
// without .git): its ../ bases render as kustomize renders them, from
// wherever the gate runs (the boundary of a checkout needs a checkout).
func TestKustomizeWithoutRepository(t *testing.T) {
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"base/kustomization.yaml":          "resources: [cm.yaml]\n",
		"base/cm.yaml":                     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: b}\n",
		"overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: prod-\n",
	})
	if _, ok := fsbound.Repository(dir); ok {
		t.Skip("the temporary directory lies in a repository")
	}
	for _, c := range []struct{ wd, dir string }{
		{"overlays/prod", "."}, {"overlays", "prod"}, {".", "overlays/prod"}, {"/", filepath.Join(dir, "overlays/prod")},
	} {
		wd := c.wd
		if !filepath.IsAbs(wd) {
			wd = filepath.Join(dir, wd)
		}
		t.Chdir(wd)
		res, err := Kustomize(c.dir, Options{})
		if err != nil {
			t.Errorf("from %s, -k %s: %v", c.wd, c.dir, err)
			continue
		}
		if len(res.Resources) != 1 || res.Resources[0].GetName() != "prod-cfg" {
			t.Errorf("from %s, -k %s: %d resources", c.wd, c.dir, len(res.Resources))
		}
	}
}
