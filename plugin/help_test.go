package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// run runs the plugin in process from dir.
func run(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if dir != "" {
		t.Chdir(dir)
		defer func() { _ = os.Chdir(wd) }()
	}
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, "v1.2.3")
	return out.String(), errb.String(), code
}

// TestHelpOnStdout: --help, help COMMAND and COMMAND --help print the
// command's description, examples and every flag with its description on
// stdout, exit 0.
func TestHelpOnStdout(t *testing.T) {
	for _, cmd := range []string{"check", "pin", "selftest", "status", "rules", "version", "completion"} {
		for _, args := range [][]string{{cmd, "--help"}, {"help", cmd}, {cmd, "-h"}} {
			out, errOut, code := run(t, "", args...)
			if code != 0 || errOut != "" || !strings.Contains(out, "Examples:\n") || !strings.Contains(out, "kubectl gate "+cmd) {
				t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
			}
			if n := strings.Count(out, "\n  # "); cmd != "version" && (n < 2 || n > 4) {
				t.Errorf("%v: %d examples, want 2-4", args, n)
			}
			if strings.Contains(out, "Usage of") || strings.Contains(out, "--rego conftest") {
				t.Errorf("%v: raw pflag usage or a garbled placeholder:\n%s", args, out)
			}
		}
	}
	out, _, code := run(t, "", "check", "--help")
	if code != 0 || !strings.Contains(out, "--fail-on string") || !strings.Contains(out, "lowest severity that fails the gate") {
		t.Errorf("check --help lacks a flag's description:\n%s", out)
	}
	if out, _, code := run(t, "", "--help"); code != 0 || !strings.Contains(out, "Commands:") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
	if out, _, _ := run(t, "", "selftest", "--help"); strings.Contains(out, "sarif") {
		t.Errorf("selftest --help offers formats it refuses:\n%s", out)
	}
}

func TestVersion(t *testing.T) {
	if out, _, code := run(t, "", "--version"); code != 0 || out != "v1.2.3\n" {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	out, _, code := run(t, "", "version", "-o", "json")
	var v map[string]string
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v["version"] != "v1.2.3" {
		t.Errorf("version -o json: exit %d, %q (%v)", code, out, err)
	}
}

// TestCommonMistakes: the mistakes a new user makes first are exit 2 (a
// missing input: 3, nothing was checked) with a line that says what was
// meant.
func TestCommonMistakes(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"overlays/prod/kustomization.yaml": "resources: [web.yaml]\n",
		"overlays/prod/web.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
		"web.yaml":                         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
		"charts/shop.tgz":                  "not a chart",
	})
	for _, c := range []struct {
		name string
		args []string
		want string
		code int // 0: ExitUsage
	}{
		{"-k on a manifest file", []string{"check", "-k", "web.yaml"}, "web.yaml is a file: -k takes a kustomization directory; for rendered manifests use -f web.yaml", 0},
		{"-k on kustomization.yaml", []string{"check", "-k", "overlays/prod/kustomization.yaml"}, "-k takes its directory: -k overlays/prod", 0},
		{"--config on a kustomization", []string{"check", "-k", "overlays/prod", "--config", "overlays/prod/kustomization.yaml"}, "is a kustomization, not a Gate or Pin object", 0},
		{"a missing path, close to one", []string{"check", "-k", "overlays/prd"}, "overlays/prd does not exist (did you mean overlays/prod?)", ExitNoVerdict},
		{"a missing -f file", []string{"check", "-f", "web.yml"}, "web.yml does not exist (did you mean web.yaml?)", ExitNoVerdict},
		{"a directory without -k", []string{"check", "overlays/prod"}, `unexpected argument(s) "overlays/prod": inputs are given with -k, -f or --chart; did you mean -k overlays/prod`, 0},
		{"a misspelled command", []string{"chek", "-k", "overlays/prod"}, `unknown command "chek" (did you mean "check"?)`, 0},
		{"a misspelled flag", []string{"check", "--kustomise", "overlays/prod"}, `unknown flag: --kustomise (did you mean "--kustomize"?)`, 0},
		{"a misspelled rule id", []string{"check", "-k", "overlays/prod", "--rule", "image-digset=off"}, `unknown rule id "image-digset" (did you mean "image-digest"?)`, 0},
		{"a misspelled format", []string{"check", "-k", "overlays/prod", "-o", "sraif"}, `(did you mean "sarif"?)`, 0},
		{"--fail-on warnings", []string{"check", "-k", "overlays/prod", "--fail-on", "warnings"}, `(did you mean "warning"?)`, 0},
		{"--timeout without a unit", []string{"check", "-k", "overlays/prod", "--timeout", "30"}, `must be a duration like "30s"`, 0},
		{"a packaged chart", []string{"check", "--chart", "charts/shop.tgz"}, "a packaged chart must be unpacked first", 0},
		{"no input", []string{"check"}, "no input: give -k DIR, --chart DIR or -f FILE|DIR|-", 0},
		{"rules: a misspelled id", []string{"rules", "image-digset"}, `(did you mean "image-digest"?)`, 0},
		{"help of no such command", []string{"help", "chek"}, `(did you mean "check"?)`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := c.code
			if want == 0 {
				want = ExitUsage
			}
			out, errOut, code := run(t, dir, c.args...)
			if code != want || !strings.Contains(errOut, c.want) || out != "" {
				t.Errorf("exit %d (want %d), stderr lacks %q\nstdout:\n%s\nstderr:\n%s", code, want, c.want, out, errOut)
			}
		})
	}
}

func TestRulesCommand(t *testing.T) {
	out, _, code := run(t, "", "rules", "image-digest")
	if code != 0 || !strings.Contains(out, "How to fix:") || !strings.Contains(out, "docs/rules.md#image-digest") {
		t.Errorf("rules image-digest: exit %d\n%s", code, out)
	}
	out, _, code = run(t, "", "rules", "-o", "json")
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Rules      []struct{ ID, Fix, HelpURI string }
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Rules) != len(ruleIDs()) || doc.Rules[0].Fix == "" {
		t.Errorf("rules -o json: exit %d, %v\n%s", code, err, out)
	}
}

// TestCompletion: the protocol kubectl uses for plugins: subcommands, flags,
// rule ids for --rule, directories for -k; and each shell's script.
func TestCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "ch"}, "check\n:4\n"},
		{[]string{"__complete", "check", "--kus"}, "--kustomize\n:4\n"},
		{[]string{"__complete", "check", "--rule", "image-digest-s"}, "image-digest-stale=\n:6\n"},
		{[]string{"__complete", "check", "--rule", "image-digest="}, "image-digest=error\nimage-digest=warning\nimage-digest=off\n:4\n"},
		{[]string{"__complete", "check", "-k", ""}, ":16\n"},
		{[]string{"__complete", "rules", "rollout-bluegreen-a"}, "rollout-bluegreen-autopromotion\n:4\n"},
	} {
		if out, _, code := run(t, "", c.args...); code != 0 || out != c.want {
			t.Errorf("%v: exit %d, %q, want %q", c.args, code, out, c.want)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if out, _, code := run(t, "", "completion", shell); code != 0 || !strings.Contains(out, "kubectl-gate __complete") {
			t.Errorf("completion %s: exit %d\n%s", shell, code, out)
		}
	}
	if _, _, code := run(t, "", "completion", "tcsh"); code != ExitUsage {
		t.Errorf("completion tcsh: exit %d", code)
	}
}

// TestE2EKubectlCompletesThePlugin: the real kubectl finds
// kubectl_complete-gate on PATH and offers what it answers.
func TestE2EKubectlCompletesThePlugin(t *testing.T) {
	kubectl := testutil.Tool(t, "KUBECTL", "kubectl")
	bin := filepath.Dir(testutil.Bin(t, "kubectl-gate"))
	testutil.Bin(t, "kubectl_complete-gate")
	r := testutil.Run(t, t.TempDir(), "", []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, kubectl, "__complete", "gate", "check", "--rule", "image-digest-s")
	if !strings.Contains(r.Stdout, "image-digest-stale=\n:6") {
		t.Errorf("kubectl __complete gate …:\n%s\n%s", r.Stdout, r.Stderr)
	}
}
