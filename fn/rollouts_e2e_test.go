package fn_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// rolloutApps are the example apps with their object counts.
var rolloutApps = map[string]int{"canary": 5, "bluegreen": 5}

// kustomizeRollouts runs the real kustomize CLI on a rollouts example with
// exec functions on, so the Gate under validators: runs as gate-fn.
func kustomizeRollouts(t *testing.T, dir string) testutil.Result {
	t.Helper()
	testutil.Bin(t, "gate-fn")
	k := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	return testutil.Run(t, testutil.Root(t), "", nil, k, "build", "--enable-alpha-plugins", "--enable-exec", dir)
}

// TestE2ERolloutsGoodApps: the apps pass inside kustomize build, and the
// validator leaves every resource in the output.
func TestE2ERolloutsGoodApps(t *testing.T) {
	for app, n := range rolloutApps {
		t.Run(app, func(t *testing.T) {
			r := kustomizeRollouts(t, "examples/rollouts/"+app)
			if r.Code != 0 {
				t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
			}
			if got := strings.Count("\n"+r.Stdout, "\nkind: "); got != n {
				t.Errorf("%d objects in the output, want %d:\n%s", got, n, r.Stdout)
			}
			if !strings.Contains(r.Stdout, "kind: Rollout") || !strings.Contains(r.Stdout, "kind: AnalysisTemplate") {
				t.Errorf("output lacks the Rollout or its AnalysisTemplate:\n%s", r.Stdout)
			}
		})
	}
}

// badVariant is a copy of an app with one edit that a rule must stop.
type badVariant struct {
	name, app, file, old, new string
	// want is the stderr line's start: severity, rule, resource, field.
	want string
}

var rolloutBadVariants = []badVariant{
	{"pause removed", "canary", "rollout.yaml", "        - pause: {}\n", "",
		"ERROR [rollout-canary-pause] Rollout/checkout (ns shop) spec.strategy.canary.steps[3]"},
	{"canary points at stable", "canary", "rollout.yaml", "canaryService: checkout-canary", "canaryService: checkout-stable",
		"ERROR [rollout-canary-services] Rollout/checkout (ns shop) spec.strategy.canary.stableService"},
	{"template misspelled", "bluegreen", "rollout.yaml", "- templateName: smoke-test\n        args:\n          - name: service-name\n            value: ledger-preview",
		"- templateName: smoke-tset\n        args:\n          - name: service-name\n            value: ledger-preview",
		"ERROR [rollout-analysis-ref] Rollout/ledger (ns ledger) spec.strategy.blueGreen.prePromotionAnalysis.templates[0]"},
	{"selector broken", "bluegreen", "services.yaml", "name: ledger-preview\nspec:\n  selector: {app: ledger}", "name: ledger-preview\nspec:\n  selector: {app: ledger-v2}",
		"ERROR [rollout-service-selector] Service/ledger-preview (ns ledger) spec.selector"},
	{"workloadRef renamed", "bluegreen", "rollout.yaml", "    name: ledger\n    scaleDown", "    name: ledger-v2\n    scaleDown",
		"ERROR [rollout-workload-ref] Rollout/ledger (ns ledger) spec.workloadRef.name"},
}

// TestE2ERolloutsBadVariants: each broken copy fails kustomize build with a
// stderr line naming the rule and the resource, and the plugin reports the
// same findings on the same kustomization.
func TestE2ERolloutsBadVariants(t *testing.T) {
	plugin := testutil.Bin(t, "kubectl-gate")
	for _, v := range rolloutBadVariants {
		t.Run(v.name, func(t *testing.T) {
			dir := variantDir(t, v)
			r := kustomizeRollouts(t, dir)
			if r.Code == 0 {
				t.Fatalf("kustomize build passed:\n%s", r.Stdout)
			}
			fnLines := findingHeads(r.Stderr)
			if !slices.Contains(fnLines, v.want) {
				t.Errorf("kustomize stderr lacks %q:\n%s", v.want, r.Stderr)
			}
			p := testutil.Run(t, testutil.Root(t), "", nil, plugin, "check", "-k", dir, "-o", "json")
			if p.Code != 1 {
				t.Errorf("kubectl gate check -k: exit %d, want 1\n%s%s", p.Code, p.Stdout, p.Stderr)
			}
			// rollout-invalid-spec runs in the plugin only (the function
			// says so on each Rollout, as info): compare the rest.
			heads, files := pluginHeads(t, p.Stdout)
			got := slices.DeleteFunc(heads, func(l string) bool { return strings.Contains(l, "[rollout-invalid-spec]") })
			if !slices.Equal(got, fnLines) {
				t.Errorf("the plugin and the KRM function disagree:\nplugin: %q\nfn:     %q", got, fnLines)
			}
			// The plugin names the source file the broken value is in.
			if !slices.Contains(files[v.want], dir+"/"+v.file) {
				t.Errorf("the plugin's finding %q names %q, not the source file %s/%s", v.want, files[v.want], dir, v.file)
			}
		})
	}
}

// TestE2ERolloutsResults runs gate-fn on a ResourceList: the structured
// results carry the rule tag, the resource and the field path.
func TestE2ERolloutsResults(t *testing.T) {
	v := rolloutBadVariants[0]
	dir := variantDir(t, v)
	root := testutil.Root(t)
	// The plain render, to hand to gate-fn ourselves: the same kustomization
	// without its validators: (kustomize build --enable-alpha-plugins
	// without --enable-exec does not skip the validator, it fails with
	// "validator shouldn't modify the resource map").
	kust := filepath.Join(root, dir, "kustomization.yaml")
	data, err := os.ReadFile(kust)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kust, []byte(strings.Replace(string(data), "validators:\n  - gate.yaml\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	render := testutil.Run(t, root, "", nil, testutil.Tool(t, "KUSTOMIZE", "kustomize"), "build", dir)
	if render.Code != 0 || strings.Contains(render.Stdout, "kind: Gate") {
		t.Fatalf("kustomize build without exec: %s", render.Stderr)
	}
	in := resourceList(t, render.Stdout, filepath.Join(root, dir, "gate.yaml"))
	out := testutil.Run(t, root, in, nil, testutil.Bin(t, "gate-fn"))
	if out.Code == 0 {
		t.Fatalf("gate-fn passed:\n%s", out.Stdout)
	}
	var rl struct {
		Results []framework.Result `yaml:"results"`
	}
	if err := yaml.Unmarshal([]byte(out.Stdout), &rl); err != nil {
		t.Fatalf("parsing the ResourceList: %v\n%s", err, out.Stdout)
	}
	// Besides the finding, the function says on the Rollout that
	// rollout-invalid-spec did not run (the plugin runs it), as info.
	var results []framework.Result
	notRun := false
	for _, r := range rl.Results {
		if r.Tags["rule"] == "rollout-invalid-spec" && r.Severity == framework.Info && strings.Contains(r.Message, "did not run here") {
			notRun = true
			continue
		}
		results = append(results, r)
	}
	if len(results) != 1 || !notRun {
		t.Fatalf("want one result and the not-run notice of rollout-invalid-spec, got %+v", rl.Results)
	}
	res := results[0]
	if res.Tags["rule"] != "rollout-canary-pause" || res.ResourceRef == nil || res.ResourceRef.Name != "checkout" ||
		res.Field == nil || res.Field.Path != "spec.strategy.canary.steps[3]" || res.Severity != framework.Error {
		t.Errorf("result = %+v (ref %+v, field %+v)", res, res.ResourceRef, res.Field)
	}
}

// variantDir copies an app beside the others (so the Gate's exec path
// ../../../bin/gate-fn still resolves) and applies the edit.
func variantDir(t *testing.T, v badVariant) string {
	t.Helper()
	root := testutil.Root(t)
	src := filepath.Join(root, "examples", "rollouts", v.app)
	dst, err := os.MkdirTemp(filepath.Join(root, "examples", "rollouts"), "tmp-"+v.app+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dst) })
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == v.file {
			if !strings.Contains(string(data), v.old) {
				t.Fatalf("%s/%s no longer holds %q", v.app, v.file, v.old)
			}
			data = []byte(strings.Replace(string(data), v.old, v.new, 1))
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel, _ := filepath.Rel(root, dst)
	return filepath.ToSlash(rel)
}

// findingHead is a finding line up to its message: severity, rule,
// resource and field path.
var findingHead = regexp.MustCompile(`(?m)^((?:ERROR|WARNING) \[[a-z-]+\][^:]*):`)

func findingHeads(s string) []string {
	var out []string
	for _, m := range findingHead.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// pluginHeads reads the plugin's -o json report: each error or warning's
// head as the function prints it (severity, rule, object, field), sorted
// and unique, and the files each head's findings name.
func pluginHeads(t *testing.T, stdout string) ([]string, map[string][]string) {
	t.Helper()
	var rep struct {
		Results []finding.Finding `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("reading the plugin's JSON report: %v\n%s", err, stdout)
	}
	var heads []string
	files := map[string][]string{}
	for _, f := range rep.Results {
		if f.Severity != finding.SeverityError && f.Severity != finding.SeverityWarning {
			continue
		}
		head := strings.ToUpper(string(f.Severity)) + " [" + f.Rule + "] " + f.ResourceRef.String()
		if f.Field != nil {
			head += " " + f.Field.Path
		}
		heads = append(heads, head)
		if f.File != nil {
			files[head] = append(files[head], f.File.Path)
		}
	}
	slices.Sort(heads)
	return slices.Compact(heads), files
}

// resourceList wraps a rendered stream and a Gate file in a ResourceList.
func resourceList(t *testing.T, stream, gateFile string) string {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := yaml.ReadFile(gateFile)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w := kio.ByteWriter{Writer: &b, FunctionConfig: cfg, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}
	if err := w.Write(items); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
