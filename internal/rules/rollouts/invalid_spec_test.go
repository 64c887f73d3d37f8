package rollouts_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/validation"
	ingressutil "github.com/argoproj/argo-rollouts/utils/ingress"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rolloutvalidation"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/rollouts"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// The rollout rules run here as the plugin runs them: with the controller's
// validation linked.
func init() { rollouts.UseControllerValidation(rolloutvalidation.Validate) }

const invalidSpecDir = "testdata/invalid-spec"

// specCase is one file of testdata/invalid-spec: a render holding a Rollout
// and what it references, with its expectations in header comments.
type specCase struct {
	name, stream string
	// want are the rollout-invalid-spec findings, "path: message", in order.
	want []string
	// other are "rule path" findings other rollout rules must make.
	other []string
	// covered are the controller's errors ("path: message", as the
	// oracle prints them) that a narrower rule reports (an other line),
	// which rollout-invalid-spec leaves to it.
	covered []string
}

func specCases(t *testing.T) []specCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(invalidSpecDir, "*.yaml"))
	if err != nil || len(files) < 15 {
		t.Fatalf("invalid-spec corpus: %d files, %v", len(files), err)
	}
	var out []specCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := specCase{name: filepath.Base(f), stream: string(data)}
		for _, line := range strings.Split(c.stream, "\n") {
			if w, ok := strings.CutPrefix(line, "# want: "); ok {
				c.want = append(c.want, w)
			}
			if o, ok := strings.CutPrefix(line, "# other: "); ok {
				c.other = append(c.other, o)
			}
			if o, ok := strings.CutPrefix(line, "# covered: "); ok {
				c.covered = append(c.covered, o)
			}
		}
		out = append(out, c)
	}
	return out
}

// TestInvalidSpecCorpus: on every file of the invalid-spec corpus the rule
// reports exactly what the controller's validation package says when the
// test calls it itself (ValidateRollout and ValidateRolloutReferencedResources
// on the file's objects, decoded with another decoder), in the controller's
// words, and the findings the file's header names; references missing from
// the render are left to the rules the header names.
func TestInvalidSpecCorpus(t *testing.T) {
	for _, c := range specCases(t) {
		t.Run(c.name, func(t *testing.T) {
			res := ruletest.Parse(t, c.stream)
			got := checkRule(t, "rollout-invalid-spec", c.stream)
			ruletest.Expect(t, got, c.want)
			var gotLines []string
			for _, f := range got {
				gotLines = append(gotLines, f.Field.Path+": "+f.Message)
			}
			oracle := controllerOracle(t, c.stream)
			for _, cv := range c.covered {
				if !slices.Contains(oracle, cv) {
					t.Errorf("covered %q is not an error of the controller's validation: %q", cv, oracle)
				}
			}
			uncovered := slices.DeleteFunc(slices.Clone(oracle), func(l string) bool { return slices.Contains(c.covered, l) })
			if !slices.Equal(gotLines, uncovered) {
				t.Errorf("the rule and the controller's validation disagree:\nrule:       %q\ncontroller: %q\ncovered by narrower rules: %q", gotLines, oracle, c.covered)
			}
			if len(c.covered) > 0 && len(c.other) == 0 {
				t.Errorf("covered errors but no narrower finding (# other:) named")
			}
			all := rolloutFindings(res)
			for _, o := range c.other {
				rule, path, _ := strings.Cut(o, " ")
				if !slices.ContainsFunc(all, func(f finding.Finding) bool {
					return f.Rule == rule && f.Field != nil && f.Field.Path == path
				}) {
					t.Errorf("no %s finding at %s:\n%s", rule, path, formatAll(all))
				}
			}
		})
	}
}

// controllerOracle calls the controller's validation package directly on
// the file's objects, decoded with sigs.k8s.io/yaml: the Rollout, its
// workloadRef's Deployment, the Services and AnalysisTemplates it names
// (the corpus uses no nested templates, Ingress or VirtualService
// references beyond the nginx one, which the oracle reads too).
func controllerOracle(t *testing.T, stream string) []string {
	t.Helper()
	var ros []*v1alpha1.Rollout
	services := map[string]*corev1.Service{}
	templates := map[string]*v1alpha1.AnalysisTemplate{}
	deployments := map[string]*appsv1.Deployment{}
	ingresses := map[string]*networkingv1.Ingress{}
	virtualServices := map[string]unstructured.Unstructured{}
	for _, doc := range strings.Split(stream, "\n---\n") {
		var meta struct{ Kind string }
		mustDecode(t, doc, &meta)
		switch meta.Kind {
		case "Rollout":
			ro := &v1alpha1.Rollout{}
			mustDecode(t, doc, ro)
			ros = append(ros, ro)
		case "Service":
			s := &corev1.Service{}
			mustDecode(t, doc, s)
			services[s.Name] = s
		case "AnalysisTemplate":
			a := &v1alpha1.AnalysisTemplate{}
			mustDecode(t, doc, a)
			templates[a.Name] = a
		case "Deployment":
			d := &appsv1.Deployment{}
			mustDecode(t, doc, d)
			deployments[d.Name] = d
		case "Ingress":
			i := &networkingv1.Ingress{}
			mustDecode(t, doc, i)
			ingresses[i.Name] = i
		case "VirtualService":
			var v map[string]any
			mustDecode(t, doc, &v)
			u := unstructured.Unstructured{Object: v}
			virtualServices[u.GetName()] = u
		}
	}
	var out []string
	for _, ro := range ros {
		if ref := ro.Spec.WorkloadRef; ref != nil && ro.Spec.EmptyTemplate() {
			if d := deployments[ref.Name]; d != nil {
				ro.Spec.SetResolvedTemplate(d.Spec.Template)
			}
		}
		errs := validation.ValidateRollout(ro)
		var refs validation.ReferencedResources
		addSvc := func(name string, typ validation.ServiceType) {
			if s := services[name]; s != nil {
				refs.ServiceWithType = append(refs.ServiceWithType, validation.ServiceWithType{Service: s, Type: typ})
			}
		}
		if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
			addSvc(bg.ActiveService, validation.ActiveService)
			addSvc(bg.PreviewService, validation.PreviewService)
		}
		if cn := ro.Spec.Strategy.Canary; cn != nil {
			addSvc(cn.StableService, validation.StableService)
			addSvc(cn.CanaryService, validation.CanaryService)
			for i, step := range cn.Steps {
				if step.Analysis == nil {
					continue
				}
				var ts []*v1alpha1.AnalysisTemplate
				for _, r := range step.Analysis.Templates {
					if a := templates[r.TemplateName]; a != nil {
						ts = append(ts, a)
					}
				}
				if len(ts) == len(step.Analysis.Templates) {
					refs.AnalysisTemplatesWithType = append(refs.AnalysisTemplatesWithType, validation.AnalysisTemplatesWithType{
						AnalysisTemplates: ts, TemplateType: validation.InlineAnalysis, CanaryStepIndex: i, Args: step.Analysis.Args,
					})
				}
			}
		}
		if tr := ro.Spec.Strategy.Canary; tr != nil && tr.TrafficRouting != nil && tr.TrafficRouting.Nginx != nil {
			if i := ingresses[tr.TrafficRouting.Nginx.StableIngress]; i != nil {
				refs.Ingresses = append(refs.Ingresses, *ingressutil.NewIngress(i))
			}
		}
		if tr := ro.Spec.Strategy.Canary; tr != nil && tr.TrafficRouting != nil && tr.TrafficRouting.Istio != nil {
			if vs := tr.TrafficRouting.Istio.VirtualService; vs != nil {
				if u, ok := virtualServices[vs.Name]; ok {
					refs.VirtualServices = append(refs.VirtualServices, u)
				}
			}
		}
		if err := validation.ValidateRolloutNginxIngressesConfig(ro); err != nil {
			t.Fatalf("the corpus has no nginx configuration error, got %v", err)
		}
		errs = append(errs, validation.ValidateRolloutReferencedResources(ro, refs)...)
		for _, e := range errs {
			out = append(out, e.Field+": "+rollouts.Message(e))
		}
	}
	return out
}

func mustDecode(t *testing.T, doc string, obj any) {
	t.Helper()
	if err := sigsyaml.Unmarshal([]byte(doc), obj); err != nil {
		t.Fatalf("decoding: %v", err)
	}
}

// TestInvalidSpecMessagesAreTheControllers: the finding's text is the
// controller's own error, as its InvalidSpec condition carries it.
func TestInvalidSpecMessagesAreTheControllers(t *testing.T) {
	got := checkRule(t, "rollout-invalid-spec", readSpec(t, "canary-surge-zero.yaml"))
	want := "the Argo Rollouts v1.10.1 controller marks the Rollout InvalidSpec: spec.strategy.maxSurge: Invalid value: 0: MaxSurge and MaxUnavailable both can not be zero"
	if len(got) != 1 || got[0].Message != want || got[0].Severity != finding.SeverityError {
		t.Fatalf("got %s, want one error %q", formatAll(got), want)
	}
}

// TestInvalidSpecNotLinked: a binary without the controller's validation
// (the KRM function) says on every Rollout that the rule did not run, as
// info: never a silent pass, never a verdict it did not reach.
func TestInvalidSpecNotLinked(t *testing.T) {
	rollouts.UseControllerValidation(nil)
	t.Cleanup(func() { rollouts.UseControllerValidation(rolloutvalidation.Validate) })
	got := checkRule(t, "rollout-invalid-spec", readSpec(t, "canary-surge-zero.yaml"))
	if len(got) != 1 || got[0].Severity != finding.SeverityInfo || !strings.Contains(got[0].Message, "not checked: rollout-invalid-spec did not run here") {
		t.Fatalf("got %s, want one info finding saying the rule did not run", formatAll(got))
	}
}

// TestControllerVersionIsGoMod: the version the docs and messages name is
// the module go.mod links.
func TestControllerVersionIsGoMod(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.Root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var linked string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/argoproj/argo-rollouts" {
			linked = f[1]
		}
	}
	for name, v := range map[string]string{"rollouts.ControllerVersion": rollouts.ControllerVersion, "rolloutvalidation.Version": rolloutvalidation.Version} {
		if v != linked {
			t.Errorf("go.mod links argo-rollouts %q, %s is %q", linked, name, v)
		}
	}
}

func readSpec(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(invalidSpecDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestInvalidSpecBinaries: the built plugin reports, on every file of the
// invalid-spec corpus, the same rollout-invalid-spec findings as the rule
// in process (rule, Rollout, path and message), and exits 1 when there is
// one; the built KRM function, which does not link the controller's
// validation, says on the Rollout that the rule did not run.
func TestInvalidSpecBinaries(t *testing.T) {
	plugin := testutil.Bin(t, "kubectl-gate")
	root := testutil.Root(t)
	for _, c := range specCases(t) {
		t.Run(c.name, func(t *testing.T) {
			file, _ := filepath.Abs(filepath.Join(invalidSpecDir, c.name))
			r := testutil.Run(t, root, "", nil, plugin, "check", "-f", file, "-o", "json")
			var report struct {
				Findings []finding.Finding `json:"results"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
				t.Fatalf("exit %d, parsing the JSON report: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
			}
			var got, want []string
			for _, f := range report.Findings {
				if f.Rule == "rollout-invalid-spec" {
					got = append(got, f.ResourceRef.Name+" "+f.Field.Path+": "+f.Message)
				}
			}
			for _, f := range checkRule(t, "rollout-invalid-spec", c.stream) {
				want = append(want, f.ResourceRef.Name+" "+f.Field.Path+": "+f.Message)
			}
			if !slices.Equal(got, want) {
				t.Errorf("kubectl gate check -f %s:\n got  %q\nwant %q", c.name, got, want)
			}
			if len(want) > 0 && r.Code != 1 {
				t.Errorf("exit %d, want 1\n%s", r.Code, r.Stderr)
			}
		})
	}

	fnBin := testutil.Bin(t, "gate-fn")
	items, err := os.ReadFile(filepath.Join(invalidSpecDir, "canary-surge-zero.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " +
		strings.ReplaceAll(strings.TrimSpace(stripComments(string(items))), "\n", "\n  ") + "\n"
	r := testutil.Run(t, root, in, nil, fnBin)
	var rl struct {
		Results []struct {
			Message  string            `json:"message"`
			Severity string            `json:"severity"`
			Tags     map[string]string `json:"tags"`
		} `json:"results"`
	}
	if err := sigsyaml.Unmarshal([]byte(r.Stdout), &rl); err != nil {
		t.Fatalf("gate-fn: exit %d, parsing the ResourceList: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	var notRun bool
	for _, res := range rl.Results {
		if res.Tags["rule"] == "rollout-invalid-spec" {
			if res.Severity != "info" || !strings.Contains(res.Message, "did not run here") {
				t.Errorf("gate-fn result %+v, want info: did not run", res)
			}
			notRun = true
		}
	}
	if !notRun {
		t.Errorf("gate-fn: exit %d, results %+v: want an info result saying rollout-invalid-spec did not run\n%s", r.Code, rl.Results, r.Stderr)
	}
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestInvalidSpecNarrowerTextsAreTheControllers: every message part that
// rollout-invalid-spec leaves to a narrower rule is in one of the
// controller's own messages, so a reworded message in a new controller
// release shows here rather than as a silently doubled finding.
func TestInvalidSpecNarrowerTextsAreTheControllers(t *testing.T) {
	messages := []string{
		validation.DuplicatedServicesCanaryMessage, validation.DuplicatedPingPongServicesMessage,
		validation.InvalidTrafficRoutingMessage, validation.InvalidPingPongProvidedMessage,
		validation.DuplicatedServicesBlueGreenMessage,
		// validation_references.go formats this one inline.
		`Service "web" has unmatch label "app" in rollout`,
		// and the Istio plugin this one (rollout/trafficrouting/istio).
		`HTTP Route 'primary' is not found in the defined Virtual Service.`,
	}
	for _, text := range rollouts.NarrowerTexts() {
		if !slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(m, text) }) {
			t.Errorf("%q is in none of the controller's messages", text)
		}
	}
}

// TestInvalidSpecDefersOnlyToARuleThatReports: the controller's error that
// a narrower rule reports is left to it, at the narrower rule's default
// severity; with that rule off or lowered to a warning, the controller's
// finding is back, so the Rollout still fails.
func TestInvalidSpecDefersOnlyToARuleThatReports(t *testing.T) {
	stream := readSpec(t, "canary-service-selector-mismatch.yaml")
	const want = `spec.strategy.canary.canaryService: Service "web-canary" has unmatch label "app" in rollout`
	for _, tc := range []struct {
		severity string
		want     []string
	}{
		{"", nil},
		{"error", nil},
		{"warning", []string{want}},
		{"off", []string{want}},
	} {
		cfg := config.Default()
		if tc.severity != "" {
			cfg.Rules["rollout-service-selector"] = tc.severity
		}
		r, _ := all.Lookup("rollout-invalid-spec")
		got := ruletest.Check(t, r, ruletest.Case{Input: stream, Config: cfg})
		t.Run("rollout-service-selector "+tc.severity, func(t *testing.T) { ruletest.Expect(t, got, tc.want) })
	}
}

// TestInvalidSpecManyRollouts: with enough Rollouts to be validated on
// every core (rules.PerObject), the findings are those of each Rollout,
// in input order; valid Rollouts between them give none.
func TestInvalidSpecManyRollouts(t *testing.T) {
	bad := readSpec(t, "canary-surge-zero.yaml")
	good := strings.Replace(bad, "maxSurge: 0", "maxSurge: 1", 1)
	var b strings.Builder
	var want []string
	for i := range 150 {
		doc := good
		if i%3 == 0 {
			doc = bad
			want = append(want, fmt.Sprintf("ns%d", i))
		}
		b.WriteString("---\n" + strings.Replace(doc, "namespace: shop", fmt.Sprintf("namespace: ns%d", i), 1))
	}
	got := checkRule(t, "rollout-invalid-spec", b.String())
	var gotNS []string
	for _, f := range got {
		gotNS = append(gotNS, f.ResourceRef.Namespace)
	}
	if !slices.Equal(gotNS, want) {
		t.Errorf("findings on %q,\nwant on %q", gotNS, want)
	}
}
