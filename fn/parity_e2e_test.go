package fn_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// notSingleRender are the rules that judge more than the one render both
// shells see: the kustomization files (gate-placement), the registry
// (image-resolve), the renders of Applications' and Flux objects' sources,
// which only the plugin makes (argocd-destination-namespace,
// argocd-source-*, flux-*), and the cluster (live-*).
var notSingleRender = []string{"gate-placement", "image-resolve", "argocd-destination-namespace", "argocd-source-empty",
	"argocd-source-not-rendered", "flux-not-rendered", "flux-target-namespace"}

var (
	// decoration is what the plugin adds to a message from the
	// kustomization files it reads and the function never sees: which
	// file set a value.
	decoration = regexp.MustCompile(` \((image )?set by [^()]*(\([^()]*\)[^()]*)*\)`)
	// fnLine is a finding line the function prints on stderr.
	fnLine   = regexp.MustCompile(`^(ERROR|WARNING|INFO) \[([a-z0-9-]+)\]`)
	fileTail = regexp.MustCompile(` \[[^\[\]]+\]$`)
)

// TestE2EParityPluginAndFunction: on every kustomization of the vendored
// corpus and of examples/, `kubectl gate check -k` and `kustomize build`
// with the function under validators: (the directory's own Gate, else a
// wrapper kustomization that lists it) report the same findings — rule,
// severity, object, field and message — for every rule that judges the
// single render both see. A kustomization neither can render (a component,
// a deliberately broken fixture, a remote resource) must fail in both.
func TestE2EParityPluginAndFunction(t *testing.T) {
	kustomize := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	gateFn := testutil.Bin(t, "gate-fn")
	gate := testutil.Bin(t, "kubectl-gate")
	root := testutil.Root(t)
	var dirs []string
	for _, top := range []string{"testdata/corpus", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == "kustomization.yaml" {
				dirs = append(dirs, filepath.Dir(p))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	compared, findings := 0, 0
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			target := dir
			if !strings.Contains(string(data), "validators:") {
				target = wrap(t, dir, gateFn)
			}
			var pluginArgs, kustomizeArgs []string
			if strings.Contains(string(data), "helmCharts:") {
				pluginArgs = []string{"--enable-helm"}
				kustomizeArgs = []string{"--enable-helm", "--helm-command", testutil.Tool(t, "HELM", "helm")}
			}
			p := testutil.Run(t, root, "", nil, gate, append([]string{"check", "-k", target, "-o", "json", "--no-remote"}, pluginArgs...)...)
			if p.Code >= 2 {
				k := testutil.Run(t, root, "", nil, kustomize, append(append([]string{"build", "--enable-alpha-plugins", "--enable-exec"}, kustomizeArgs...), target)...)
				if k.Code == 0 && !strings.Contains(p.Stderr+p.Stdout, "remote") {
					t.Fatalf("check -k gave no verdict (exit %d) where kustomize build with the function passed:\n%s%s", p.Code, p.Stdout, p.Stderr)
				}
				t.Logf("no verdict in both shells (check -k exit %d)", p.Code)
				return
			}
			k := testutil.Run(t, root, "", nil, kustomize, append(append([]string{"build", "--enable-alpha-plugins", "--enable-exec"}, kustomizeArgs...), target)...)
			if (p.Code == 0) != (k.Code == 0) {
				t.Errorf("verdicts differ: check -k exit %d, kustomize build exit %d\n--- plugin\n%s\n--- function\n%s", p.Code, k.Code, p.Stdout, k.Stderr)
			}
			want := pluginFindings(t, p.Stdout)
			got := functionFindings(k.Stderr)
			if !slices.Equal(want, got) {
				t.Errorf("findings differ\n--- check -k\n%s\n--- kustomize build + function\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
			compared++
			findings += len(want)
		})
	}
	t.Logf("compared %d of %d kustomizations, %d findings", compared, len(dirs), findings)
	if compared < 10 {
		t.Errorf("only %d kustomizations rendered in both shells: the parity test compares too little", compared)
	}
}

// wrap writes a kustomization that renders dir and lists the function
// under validators: with an empty (default) Gate.
func wrap(t *testing.T, dir, gateFn string) string {
	w := t.TempDir()
	rel, err := filepath.Rel(w, dir)
	if err != nil {
		t.Fatal(err)
	}
	return testutil.WriteFiles(t, w, map[string]string{
		"kustomization.yaml": "resources: [" + filepath.ToSlash(rel) + "]\nvalidators: [gate.yaml]\n",
		"gate.yaml": "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata:\n  name: parity\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " +
			gateFn + "\nspec: {}\n",
	})
}

// pluginFindings are check -k's single-render findings, as the function
// prints them: without the input, the file and the plugin's decorations.
func pluginFindings(t *testing.T, stdout string) []string {
	var doc struct {
		Results []finding.Finding `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("check -k -o json: %v\n%s", err, stdout)
	}
	var out []string
	for _, f := range doc.Results {
		if slices.Contains(notSingleRender, f.Rule) || strings.HasPrefix(f.Rule, "live-") {
			continue
		}
		f.File, f.Input = nil, ""
		f.Message = decoration.ReplaceAllString(f.Message, "")
		out = append(out, report.Line(f))
	}
	slices.Sort(out)
	return out
}

// functionFindings are the function's finding lines on stderr, without the
// file kustomize's path annotations name.
func functionFindings(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		m := fnLine.FindStringSubmatch(line)
		if m == nil || slices.Contains(notSingleRender, m[2]) || strings.HasPrefix(m[2], "live-") {
			continue
		}
		// The controller's own Rollout validation is linked into the
		// plugin only; the function says so on each Rollout, as info
		// (internal/rules/rollouts: TestInvalidSpecNotLinked), and the plugin's own verdict
		// is what the two are compared on.
		if m[1] == "INFO" && m[2] == "rollout-invalid-spec" && strings.Contains(line, "did not run here") {
			continue
		}
		out = append(out, decoration.ReplaceAllString(fileTail.ReplaceAllString(line, ""), ""))
	}
	slices.Sort(out)
	return out
}
