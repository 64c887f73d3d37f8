package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// verdictCases are the hostile rows where a green run would judge less than
// what is deployed: Argo CD directory sources read as the repo-server reads
// them, policy tools that judged nothing, admission objects the API server
// refuses, removed kinds, and what a stopped run leaves behind.
func verdictCases(t *testing.T) []hostileCase {
	t.Helper()
	pinned := strings.Replace(podLatest, "nginx:latest", "nginx@"+pinnedDigest, 1)
	dirApp := func(directory string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop, namespace: argocd}\nspec:\n  project: default\n" +
			"  source: {repoURL: https://example.com/r.git, path: app, directory: " + directory + "}\n" +
			"  destination: {server: https://kubernetes.default.svc, namespace: shop}\n"
	}
	hiddenPod := strings.Replace(podLatest, "name: p}", "name: hidden}", 1)
	// A policy tool's hostile answer can only come from a stand-in script
	// (the real kyverno and conftest do not lie on demand): it is put on
	// PATH as tools/<name>.
	onPath := []string{"PATH=$DIR/tools:" + os.Getenv("PATH")}
	tool := func(t *testing.T, dir string) {
		entries, err := os.ReadDir(filepath.Join(dir, "tools"))
		must(t, err)
		for _, e := range entries {
			must(t, os.Chmod(filepath.Join(dir, "tools", e.Name()), 0o755))
		}
	}
	rego := "package main\n\ndeny contains msg if {\n\tinput.kind == \"Pod\"\n\tmsg := \"no pods\"\n}\n"
	clusterPolicy := "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: require-pinned}\nspec:\n  rules:\n  - name: pinned\n    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate: {message: pin, pattern: {spec: {containers: [{image: \"*@sha256:*\"}]}}}\n"
	elsewhere := "#!/bin/sh\ncat <<'EOF'\napiVersion: wgpolicyk8s.io/v1alpha2\nkind: ClusterPolicyReport\nmetadata: {name: merged}\nresults:\n- policy: require-pinned\n  rule: pinned\n  result: pass\n  resources: [{apiVersion: v1, kind: Pod, name: elsewhere, namespace: other}]\nEOF\n"
	return []hostileCase{
		// Argo CD's repo-server applies dot-files and, with recurse, the
		// files of dot-directories (reposerver/repository/repository.go).
		{name: "Argo CD directory source: a .hidden.yaml is applied", args: []string{"check", "-f", "app.yaml", "--apps-root", "."},
			files: map[string]string{"app.yaml": dirApp("{}"), "app/pod.yaml": pinned, "app/.hidden.yaml": hiddenPod},
			code:  1, want: "app/.hidden.yaml", stdout: true},
		{name: "Argo CD directory source: a .dot/ directory is applied with recurse", args: []string{"check", "-f", "app.yaml", "--apps-root", "."},
			files: map[string]string{"app.yaml": dirApp("{recurse: true}"), "app/pod.yaml": pinned, "app/.dot/pod.yaml": hiddenPod},
			code:  1, want: "app/.dot/pod.yaml", stdout: true},
		// A tool must judge the render (internal/policy/external/judge.go).
		{name: "conftest prints [] for the render", args: []string{"check", "-f", "pod.yaml", "--rego", "policy"},
			files: map[string]string{"pod.yaml": pinned, "policy/p.rego": rego, "tools/conftest": "#!/bin/sh\necho '[]'\n"},
			env:   onPath, setup: tool, code: 3, want: "conftest judged nothing: conftest returned no result ([]) for the render", stdout: true},
		{name: "conftest answers for another file", args: []string{"check", "-f", "pod.yaml", "--rego", "policy"},
			files: map[string]string{"pod.yaml": pinned, "policy/p.rego": rego, "tools/conftest": "#!/bin/sh\necho '[{\"filename\": \"other.yaml\", \"namespace\": \"main\", \"successes\": 1}]'\n"},
			env:   onPath, setup: tool, code: 3, want: "conftest judged something else", stdout: true},
		{name: "kyverno's PolicyReport judges only objects outside the render", args: []string{"check", "-f", "pod.yaml", "--kyverno-policy", "policy.yaml"},
			files: map[string]string{"pod.yaml": pinned, "policy.yaml": clusterPolicy, "tools/kyverno": elsewhere},
			env:   onPath, setup: tool, code: 3, want: `kyverno judged something else: kyverno returned results for "v1 Pod other/elsewhere"`, stdout: true},
		// A --timeout stop while kyverno runs (a stand-in that forks a child
		// and never answers) leaves nothing in TMPDIR.
		{name: "--timeout while kyverno runs leaves no temp copy of the render", args: []string{"check", "-f", "pod.yaml", "--kyverno-policy", "policy.yaml", "--timeout", "2s"},
			files: map[string]string{"pod.yaml": pinned, "policy.yaml": clusterPolicy, "tools/kyverno": "#!/bin/sh\nsleep 30\necho never\n"},
			env:   append([]string{"TMPDIR=$DIR/tmp"}, onPath...), setup: func(t *testing.T, dir string) { tool(t, dir); must(t, os.Mkdir(filepath.Join(dir, "tmp"), 0o755)) },
			code: 3, want: "kyverno stopped: --timeout 2s exceeded", stdout: true, maxTime: 4 * time.Second,
			after: func(t *testing.T, dir string) {
				left, err := os.ReadDir(filepath.Join(dir, "tmp"))
				must(t, err)
				if len(left) > 0 {
					t.Errorf("TMPDIR holds %s after the run", left[0].Name())
				}
			}},
		// The API server refuses to store a ValidatingAdmissionPolicy whose
		// expression does not compile, even under failurePolicy: Ignore.
		{name: "--policy with an uncompilable VAP expression under failurePolicy: Ignore", args: []string{"check", "-f", "pod.yaml", "--policy", "vap.yaml"},
			files: map[string]string{"pod.yaml": pinned, "vap.yaml": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: broken}\nspec:\n  failurePolicy: Ignore\n" +
				"  matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}\n  validations: [{expression: 'object.spec.containers.all(c, '}]\n"},
			code: 2, want: "the API server refuses it: spec.validations[0].expression", stdout: true},
	}
}
