package plugin_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/report/sarifcheck"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// The real-repository regression suite (issue 10, item 8). The built binary
// checks real manifests from public repositories — the vendored corpus in
// testdata/corpus, whose origin, commit and license are in
// testdata/corpus/PROVENANCE.md — and its verdict on each input is compared
// with a reviewed golden in testdata/repos/goldens. Every finding in those
// goldens is judged true or false positive, and every green judged true or
// false negative, in testdata/repos/README.md; TestRealReposJudged keeps the
// two in step. Regenerate with -update, then review the diff and the README.

// realRepoInput is one run of the gate on real manifests. args are relative
// to testdata/corpus.
type realRepoInput struct {
	name string
	args []string
	// copyOf, when set, runs the gate in a copy of that corpus directory
	// outside any git repository (a tarball, a CI workspace copy): the
	// checkout has no git remote.
	copyOf string
}

const (
	rolloutsEx     = "argoproj__argo-rollouts/examples/"
	rolloutsLint   = "argoproj__argo-rollouts/pkg/kubectl-argo-rollouts/cmd/lint/testdata/"
	argocd         = "argoproj__argo-cd/"
	cnoe           = "cnoe-io__stacks/"
	bridge         = "gitops-bridge-dev__gitops-bridge/argocd/iac/terraform/examples/eks/"
	fluxTenancy    = "fluxcd__flux2-multi-tenancy/"
	kubePrometheus = "prometheus-operator__kube-prometheus/"
	autopilot      = "argoproj-labs__argocd-autopilot/"
	// The reduced copies: upstream files with the one change their
	// PROVENANCE.md section names.
	argocdReduced         = "argoproj__argo-cd-reduced/"
	kubePrometheusReduced = "prometheus-operator__kube-prometheus-reduced/"
	listExample           = "applicationset/examples/list-generator/"
	argocdRepo            = "https://github.com/argoproj/argo-cd.git"
)

// gateArgs are the check arguments of the run: its inputs, and
// --no-remote where it renders kustomizations, so that a remote resource is
// refused rather than fetched.
func (in realRepoInput) gateArgs() []string {
	args := append([]string{}, in.args...)
	for _, a := range in.args {
		if a == "-k" {
			return append(args, "--no-remote")
		}
	}
	return args
}

func realRepoInputs() []realRepoInput {
	in := []realRepoInput{
		// Argo Rollouts: the project's own examples.
		{name: "rollouts-canary", args: []string{"-f", rolloutsEx + "rollout-canary.yaml"}},
		{name: "rollouts-bluegreen", args: []string{"-f", rolloutsEx + "rollout-bluegreen.yaml"}},
		{name: "rollouts-rolling-update", args: []string{"-f", rolloutsEx + "rollout-rolling-update.yaml"}},
		{name: "rollouts-analysis-step", args: []string{"-f", rolloutsEx + "rollout-analysis-step.yaml"}},
		{name: "rollouts-analysis-step-with-templates", args: []string{"-f", rolloutsEx + "rollout-analysis-step.yaml",
			"-f", rolloutsEx + "analysis-templates.yaml", "-f", rolloutsEx + "cluster-analysis-templates.yaml"}},
		{name: "rollouts-experiment", args: []string{"-f", rolloutsEx + "experiment-with-analysis.yaml"}},
		{name: "rollouts-secret", args: []string{"-f", rolloutsEx + "rollout-secret.yaml"}},
		{name: "rollouts-workload-ref", args: []string{"-f", rolloutsEx + "workload-ref"}},
		{name: "rollouts-istio", args: []string{"-f", rolloutsEx + "istio"}},
		{name: "rollouts-ambassador", args: []string{"-f", rolloutsEx + "ambassador"}},
		{name: "rollouts-apisix", args: []string{"-f", rolloutsEx + "apisix"}},
		{name: "rollouts-appmesh", args: []string{"-f", rolloutsEx + "appmesh"}},
		{name: "rollouts-traffic-management", args: []string{"-f", rolloutsEx + "traffic-management"}},
		{name: "rollouts-traffic-experiment-step", args: []string{"-f", rolloutsEx + "traffic-routing-experiment-step"}},
		// Argo CD: kustomize inputs (-k), including a components overlay,
		// a Component root, a broken and an empty kustomization.
		{name: "argocd-guestbook", args: []string{"-k", argocd + "test/e2e/testdata/guestbook"}},
		{name: "argocd-components-overlay", args: []string{"-k", argocd + "util/kustomize/testdata/kustomization_yaml_components_monorepo/envs/inseng-pdx-egert-sandbox/namespaces/inst-system/apps/hello-world"}},
		{name: "argocd-component-root", args: []string{"-k", argocd + "util/kustomize/testdata/kustomization_yaml_components_monorepo/kustomize/components/all"}},
		{name: "argocd-appset-override", args: []string{"-k", argocd + "applicationset/examples/template-override/default",
			"-k", argocd + "applicationset/examples/template-override/engineering-dev-override"}},
		{name: "argocd-configmap-generator", args: []string{"-k", argocd + "test/e2e/testdata/kustomize-cm-gen"}},
		{name: "argocd-invalid-kustomize", args: []string{"-k", argocd + "test/e2e/testdata/invalid-kustomize"}},
		{name: "argocd-empty-kustomization", args: []string{"-k", argocd + "reposerver/repository/testdata/kustomization_yaml"}},
		{name: "argocd-crd-validation", args: []string{"-f", argocd + "test/e2e/testdata/crd-validation"}},
		{name: "argocd-duplicated-resources", args: []string{"-f", argocd + "test/e2e/testdata/duplicated-resources"}},
		{name: "argocd-operator-manual", args: []string{"-f", argocd + "docs/operator-manual"}},
		{name: "argocd-application-crd", args: []string{"-f", argocd + "manifests/crds"}},
		{name: "argocd-health-fixtures", args: []string{"-f", argocd + "gitops-engine/pkg/health/testdata"}},
		// Argo CD app-of-apps repositories: Applications and ApplicationSets.
		{name: "cnoe-basic", args: []string{"-R", "-f", cnoe + "basic"}},
		{name: "cnoe-ref-implementation", args: []string{"-f", cnoe + "ref-implementation"}},
		{name: "cnoe-istio-ambient", args: []string{"-R", "-f", cnoe + "istio-ambient"}},
		{name: "cnoe-caipe", args: []string{"-R", "-f", cnoe + "caipe"}},
		{name: "cnoe-vcluster", args: []string{"-f", cnoe + "vcluster-multi-env"}},
		{name: "gitops-bridge-bootstrap", args: []string{"-f", bridge + "getting-started/bootstrap"}},
		{name: "gitops-bridge-appsets", args: []string{"-f", bridge + "private-ecr/appset-manifest-example"}},
		// Flux multi-tenancy (issue 19): a tenant's GitRepository tracks
		// branch dev-team, which this repository's history does not have.
		{name: "flux-multi-tenancy-dev-team", args: []string{"-k", fluxTenancy + "tenants/staging", "--apps-root", fluxTenancy, "--repo-url", "https://github.com/fluxcd/flux2-multi-tenancy"}},
		// kube-prometheus (issue 19): Prometheus and Alertmanager name their
		// image in spec.image, outside any pod spec; their CRDs are not
		// vendored (manifests/setup), so the kinds are allowed unschemaed.
		{name: "kube-prometheus-cr-images", args: []string{"-f", kubePrometheus + "manifests",
			"--ignore-missing-schema", "monitoring.coreos.com/Prometheus", "--ignore-missing-schema", "monitoring.coreos.com/Alertmanager"}},
		// The same two objects with spec.image pinned by digest: the
		// image field is checked and passes.
		{name: "kube-prometheus-cr-images-pinned", args: []string{"-f", kubePrometheusReduced + "manifests",
			"--ignore-missing-schema", "monitoring.coreos.com/Prometheus", "--ignore-missing-schema", "monitoring.coreos.com/Alertmanager"}},
		// Argo CD's list-generator example (issue 19, one object two
		// owners): both generated Applications deploy guestbook-ui into
		// namespace guestbook of the same cluster, identically upstream.
		{name: "argocd-list-generator-shared", args: []string{"-f", argocd + listExample + "list-example.yaml", "--apps-root", argocd, "--repo-url", argocdRepo}},
		// The same with prod's replicas edited: the two renders differ.
		{name: "argocd-list-generator-shared-differs", args: []string{"-f", argocdReduced + listExample + "list-example.yaml", "--apps-root", argocdReduced, "--repo-url", argocdRepo}},
		// The same with a namespace per element: disjoint objects.
		{name: "argocd-list-generator-namespace-per-cluster", args: []string{"-f", argocdReduced + listExample + "list-example-namespace-per-cluster.yaml", "--apps-root", argocdReduced, "--repo-url", argocdRepo}},
		// The upstream example again from a copy with no git remote and
		// no --repo-url (issue 19, a repository the gate only assumed).
		{name: "argocd-list-generator-no-remote", args: []string{"-f", argocd + listExample + "list-example.yaml", "--apps-root", argocd}, copyOf: argocd},
		// The Applications argocd-autopilot writes at bootstrap ignore
		// differences in /status of Applications (issue 19, item 5).
		{name: "argocd-autopilot-bootstrap", args: []string{"-f", autopilot + "bootstrap"}},
	}
	// Argo Rollouts' `kubectl argo rollouts lint` fixtures: upstream labels
	// each valid or invalid, which the README weighs the gate against.
	for _, f := range []string{
		"valid.yml", "valid.json", "valid-blue-green.yml", "valid-alb-canary.yml",
		"valid-nginx-basic-canary.yml", "valid-nginx-canary.yml", "valid-nginx-smi-with-vsvc.yaml",
		"valid-ingress-smi.yml", "valid-ingress-smi-multi.yml", "valid-istio-v1alpha3.yml",
		"valid-istio-v1beta1.yml", "valid-istio-v1beta1-mulitiple-virtualsvcs.yml",
		"valid-workload-ref.yaml", "valid-with-another-empty-object.yml",
		"invalid.yml", "invalid.json", "invalid-empty-rollout-vsvc.yml", "invalid-ingress-smi-multi.yml",
		"invalid-multiple-docs.yml", "invalid-nginx-canary.yml", "invalid-ping-pong.yml",
		"invalid-service-labels.yml", "invalid-unknown-field.yml",
	} {
		name := "rollouts-lint-" + strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(f, ".yml"), ".yaml"), ".json")
		if strings.HasSuffix(f, ".json") {
			name += "-json"
		}
		in = append(in, realRepoInput{name: name, args: []string{"-f", rolloutsLint + f}})
	}
	return in
}

// realRepoEnv keeps the runs off the network and off the user's files: a
// proxy that refuses every connection (a registry or remote-resource fetch
// would show up in the golden as a finding or no verdict), an empty HOME,
// and no kubeconfig.
func realRepoEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{
		"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"DOCKER_CONFIG=" + filepath.Join(home, ".docker"), "KUBECONFIG=" + filepath.Join(home, "kubeconfig"),
		"HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1", "NO_PROXY=", "https_proxy=http://127.0.0.1:1", "http_proxy=http://127.0.0.1:1", "no_proxy=",
	}
}

// exitFor is the exit code a verdict must have (README "Exit codes").
var exitFor = map[string]int{"pass": 0, "fail": 1, "no-verdict": 3}

func TestE2ERealRepos(t *testing.T) {
	corpus := testutil.Corpus(t)
	bin := testutil.Bin(t, "kubectl-gate")
	goldens := filepath.Join(testutil.Root(t), "testdata", "repos", "goldens")
	seen := map[string]bool{}
	for _, in := range realRepoInputs() {
		seen[in.name+".golden"] = true
		t.Run(in.name, func(t *testing.T) {
			dir := corpus
			if in.copyOf != "" {
				dir = t.TempDir()
				if err := os.CopyFS(filepath.Join(dir, in.copyOf), os.DirFS(filepath.Join(corpus, in.copyOf))); err != nil {
					t.Fatal(err)
				}
			}
			args := append(append([]string{"check"}, in.gateArgs()...), "-o", "json")
			r := testutil.Run(t, dir, "", realRepoEnv(t), bin, args...)
			var doc report.Document
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
				t.Fatalf("exit %d: stdout is not the json report: %v\nstdout:\n%s\nstderr:\n%s", r.Code, err, r.Stdout, r.Stderr)
			}
			if want, ok := exitFor[doc.Summary.Verdict]; !ok || r.Code != want {
				t.Errorf("verdict %q with exit %d (want %d)\nstderr:\n%s", doc.Summary.Verdict, r.Code, want, r.Stderr)
			}
			// The same run as SARIF is what GitHub code scanning accepts:
			// the SARIF 2.1.0 schema and its upload constraints (a
			// location on every result, relative URIs, fingerprints).
			sarifArgs := append(append([]string{"check"}, in.gateArgs()...), "-o", "sarif")
			if s := testutil.Run(t, dir, "", realRepoEnv(t), bin, sarifArgs...); s.Code != r.Code {
				t.Errorf("-o sarif: exit %d, -o json: %d", s.Code, r.Code)
			} else if err := sarifcheck.Check([]byte(s.Stdout)); err != nil {
				t.Errorf("-o sarif: %v", err)
			}
			got := realRepoGolden(in, r.Code, doc, dir)
			path := filepath.Join(goldens, in.name+".golden")
			if *testutil.Update {
				if err := os.MkdirAll(goldens, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden (run with -update to create it, then judge it in testdata/repos/README.md): %v", err)
			}
			if string(want) != got {
				t.Errorf("testdata/repos/goldens/%s.golden differs from the reviewed golden (review, judge in testdata/repos/README.md, then -update):\n--- want\n%s\n--- got\n%s", in.name, want, got)
			}
		})
	}
	// A golden whose input left the list is a verdict nobody checks.
	entries, err := os.ReadDir(goldens)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !seen[e.Name()] && !*testutil.Update {
			t.Errorf("testdata/repos/goldens/%s has no input in realRepoInputs: remove it", e.Name())
		} else if !seen[e.Name()] {
			if err := os.Remove(filepath.Join(goldens, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// realRepoGolden writes a run as the golden text: the input, the exit code
// and summary, one line per finding (severity, rule, object, field, and the
// file and line it blames) and one per no-verdict cause, the corpus path
// replaced by $CORPUS. Messages are left out: their wording is not the
// verdict, except the sentence that says which repository the run assumed.
func realRepoGolden(in realRepoInput, code int, doc report.Document, corpus string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# kubectl gate check %s\n", strings.Join(in.gateArgs(), " "))
	// A finding names its input ("-k DIR", "-f PATH"); it is shown where
	// the run has more than one.
	label := strings.Join(in.args, " ")
	label = strings.TrimPrefix(label, "-R ")
	fmt.Fprintf(&b, "exit %d: %s, %d resource(s), %d error(s), %d warning(s)\n", code, doc.Summary.Verdict,
		doc.Summary.Resources, doc.Summary.Errors, doc.Summary.Warnings)
	var lines []string
	for _, f := range doc.Results {
		lines = append(lines, findingLine(f, label))
	}
	// What the run says it assumed is its verdict too (issue 19: a
	// repository the gate only assumed is never silent): the sentence that
	// says so, once.
	said := map[string]bool{}
	for _, f := range doc.Results {
		if !strings.Contains(f.Message, assumedRepository) {
			continue
		}
		sentence, _, _ := strings.Cut(f.Message, ";")
		if l := "says " + sentence; !said[l] {
			said[l] = true
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	abs, _ := filepath.Abs(corpus)
	for _, f := range doc.Failures {
		f = strings.ReplaceAll(f, abs, "$CORPUS")
		fmt.Fprintf(&b, "no-verdict %s\n", f)
	}
	return b.String()
}

// assumedRepository is in the message of the finding that says the
// checkout was taken for a repository it names nowhere.
const assumedRepository = "has no git remote and no --repo-url was given"

// findingLine is one finding in a golden: "error image-digest
// Deployment/web (ns prod) spec.template.spec.containers[0].image @
// FILE:LINE", with "<- INPUT" where the finding came from another input
// than the whole run (one of several -k, or an Application).
func findingLine(f finding.Finding, label string) string {
	parts := []string{string(f.Severity), f.Rule}
	if obj := f.ResourceRef.String(); obj != "" {
		parts = append(parts, obj)
	}
	if f.Field != nil && f.Field.Path != "" {
		parts = append(parts, f.Field.Path)
	}
	// app-shared-object is on an owner; the object two owners render is
	// what tells its lines apart.
	if shared, _, ok := strings.Cut(f.Message, " is rendered "); ok && f.Rule == "app-shared-object" {
		parts = append(parts, "shares", shared)
	}
	if f.File != nil && f.File.Path != "" {
		at := f.File.Path
		if f.File.Line > 0 {
			at += fmt.Sprintf(":%d", f.File.Line)
		}
		parts = append(parts, "@", at)
	}
	if f.Input != "" && f.Input != label {
		parts = append(parts, "<-", f.Input)
	}
	return strings.Join(parts, " ")
}

// judgement is a README line judging a golden line or a green run:
// "- TP `LINE` — why", with TP/FP for findings and no-verdicts and TN/FN
// for what the gate let pass.
var judgement = regexp.MustCompile("^- (TP|FP|TN|FN) (`([^`]*)`)?\\s*(—|--)\\s*\\S")

// TestRealReposJudged checks that testdata/repos/README.md judges every
// finding and no-verdict line of every golden under that golden's heading,
// judges every green run, and judges no line that is not in the golden.
func TestRealReposJudged(t *testing.T) {
	root := testutil.Root(t)
	judged := map[string]map[string]string{} // golden → line → TP|FP|TN|FN
	f, err := os.Open(filepath.Join(root, "testdata", "repos", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "### "); ok {
			section = strings.TrimSpace(name)
			if judged[section] != nil {
				t.Errorf("README.md:%d: section %s twice", n, section)
			}
			judged[section] = map[string]string{}
			continue
		}
		if !strings.HasPrefix(line, "- TP ") && !strings.HasPrefix(line, "- FP ") &&
			!strings.HasPrefix(line, "- TN ") && !strings.HasPrefix(line, "- FN ") {
			continue
		}
		m := judgement.FindStringSubmatch(line)
		if m == nil || section == "" {
			t.Errorf("README.md:%d: a judgement is \"- TP|FP `golden line` — why\" or \"- TN|FN — why\" under a ### golden heading: %s", n, line)
			continue
		}
		if m[1] == "TN" || m[1] == "FN" {
			// A green judged, or a defect the gate missed (FN, with or
			// without the thing it missed).
			judged[section]["green:"+m[1]] = m[1]
		}
		if m[1] == "TP" || m[1] == "FP" {
			judged[section][m[3]] = m[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, in := range realRepoInputs() {
		data, err := os.ReadFile(filepath.Join(root, "testdata", "repos", "goldens", in.name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		j, ok := judged[in.name]
		if !ok {
			t.Errorf("README.md has no ### %s section judging testdata/repos/goldens/%s.golden", in.name, in.name)
			continue
		}
		want := map[string]bool{}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		for _, l := range lines[2:] {
			want[l] = true
			if v := j[l]; v != "TP" && v != "FP" {
				t.Errorf("%s: not judged TP or FP in README.md: %s", in.name, l)
			}
		}
		if strings.Contains(lines[1], ": pass,") {
			if j["green:TN"] == "" && j["green:FN"] == "" {
				t.Errorf("%s: the gate passes it; README.md must judge the green (- TN — why, or - FN — why)", in.name)
			}
		}
		for l := range j {
			if !strings.HasPrefix(l, "green:") && !want[l] {
				t.Errorf("%s: README.md judges a line the golden does not have (stale): %s", in.name, l)
			}
		}
	}
	for s := range judged {
		found := false
		for _, in := range realRepoInputs() {
			found = found || in.name == s
		}
		if !found {
			t.Errorf("README.md judges %s, which is not an input of TestE2ERealRepos", s)
		}
	}
}
