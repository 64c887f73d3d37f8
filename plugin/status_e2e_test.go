package plugin_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil/cluster"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil/livetest"
)

// statusBudget is how long one `kubectl gate status` may take against the
// loopback API server; the README says status ends in seconds.
const statusBudget = 10 * time.Second

// TestE2EStatusLive runs the built plugin through the real kubectl against a
// real kube-apiserver holding Argo CD Applications, their objects and pods.
func TestE2EStatusLive(t *testing.T) {
	kubectl := testutil.Tool(t, "KUBECTL", "kubectl")
	c := cluster.Start(t)
	bin := filepath.Dir(testutil.Bin(t, "kubectl-gate"))
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	repo, oldSHA, headSHA := gitRepo(t)
	render := livetest.WriteRender(t)

	livetest.InstallCRDs(t, c)
	for _, a := range []livetest.App{
		{Name: "shop", Revision: headSHA},
		{Name: "behind", Revision: oldSHA},
		{Name: "remote", Revision: headSHA, Server: "https://prod.example:6443"},
		{Name: "drift", Revision: headSHA, ExtraPods: []string{"registry.example/web:0.9"}},
		{Name: "empty", Revision: headSHA, Empty: true},
		{Name: "aborted", Revision: headSHA, RolloutStatus: "observedGeneration: \"1\"\nphase: Degraded\nmessage: \"RolloutAborted: Rollout aborted update to revision 2\"\nabort: true\nconditions:\n- {type: Available, status: \"True\"}\n"},
		{Name: "wide", Revision: headSHA, IgnoreDifferences: "[{group: apps, kind: Deployment, jsonPointers: [/spec]}]"},
		{Name: "nocert", Revision: headSHA, CertificateStatus: "conditions:\n- {type: Ready, status: \"False\", reason: Failed, message: \"Issuer letsencrypt not found\"}\n"},
	} {
		livetest.Install(t, c, a)
	}
	status := func(args ...string) (testutil.Result, time.Duration) {
		t.Helper()
		began := time.Now()
		r := testutil.Run(t, testutil.Root(t), "", env, kubectl, append([]string{"gate", "status"}, append(args, "--kubeconfig", c.Kubeconfig)...)...)
		return r, time.Since(began)
	}
	cases := []struct {
		app  string
		args []string
		code int
		says []string
	}{
		{"shop", []string{"--git", repo, "-k", render}, 0, []string{"PASS", "expected " + headSHA, "running in 2 pod(s)", "managed 4, expected 4"}},
		{"shop", []string{"--revision", headSHA[:10]}, 0, []string{"PASS", "status.summary.images"}},
		{"remote", nil, 3, []string{"deploys to another cluster (https://prod.example:6443): give --dest-context"}},
		{"remote", []string{"--dest-context", cluster.ContextName}, 0, []string{"PASS", "managed 4"}},
		{"behind", []string{"--git", repo, "-k", render}, 1, []string{"[live-revision]", "synced at " + oldSHA, "MISMATCH"}},
		{"drift", []string{"--git", repo, "-k", render}, 1, []string{"[live-images]", "registry.example/web:0.9", "running, NOT expected"}},
		{"empty", []string{"--git", repo}, 1, []string{"[live-resource-count]", "manages 0 objects"}},
		{"empty", []string{"--git", repo, "-k", render}, 1, []string{"[live-resource-count]", "managed 0, expected 4"}},
		{"aborted", []string{"--git", repo, "-k", render}, 1, []string{"Rollout/api (ns aborted)\n  [live-health] status.phase", "status.abort"}},
		{"nocert", []string{"--git", repo, "-k", render}, 1, []string{"Certificate/tls (ns nocert)\n  [live-health] status.conditions[Ready]", "Issuer letsencrypt not found"}},
		{"wide", []string{"--git", repo, "-k", render}, 1, []string{"Application/wide (ns argocd)\n  [argocd-ignore-differences]", "/spec"}},
		{"nocert", []string{"--rule", "live-health=warning"}, 0, []string{"WARNING [live-health]"}},
		{"missing", nil, 3, []string{"no verdict", "Application argocd/missing not found"}},
		{"shop", []string{"-n", "elsewhere"}, 3, []string{"Application elsewhere/shop not found"}},
	}
	for _, tc := range cases {
		r, took := status(append([]string{tc.app}, tc.args...)...)
		out := r.Stdout + r.Stderr
		t.Logf("kubectl gate status %s %s: exit %d in %s\n%s", tc.app, strings.Join(tc.args, " "), r.Code, took.Round(time.Millisecond), out)
		if r.Code != tc.code {
			t.Errorf("status %s %v: exit %d, want %d\n%s", tc.app, tc.args, r.Code, tc.code, out)
			continue
		}
		for _, s := range tc.says {
			if !says(out, s) {
				t.Errorf("status %s %v: output lacks %q:\n%s", tc.app, tc.args, s, out)
			}
		}
		if took > statusBudget {
			t.Errorf("status %s took %s, over %s", tc.app, took, statusBudget)
		}
	}

	t.Run("json", func(t *testing.T) {
		r, _ := status("drift", "-o", "json", "-k", render)
		var doc struct {
			Results []struct {
				Rule, Severity, Message string
				ResourceRef             map[string]string
			}
			Summary struct {
				Resources, Errors int
				Verdict           string
			}
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("-o json is not JSON (%v):\n%s%s", err, r.Stdout, r.Stderr)
		}
		if r.Code != 1 || doc.Summary.Verdict != "fail" || doc.Summary.Resources != 4 || len(doc.Results) != 1 || doc.Results[0].Rule != "live-images" {
			t.Errorf("exit %d, doc %+v; want exit 1, verdict fail, 4 resources, one live-images result", r.Code, doc)
		}
	})

	c.Stop()
	r, took := status("shop", "--git", repo)
	t.Logf("against a stopped cluster: exit %d in %s", r.Code, took.Round(time.Millisecond))
	if r.Code != 3 || !strings.Contains(r.Stderr, "the cluster is unreachable") {
		t.Errorf("cluster stopped: exit %d, want 3 naming the unreachable cluster:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// gitRepo makes a repository with two commits and returns it with both SHAs.
func gitRepo(t *testing.T) (dir, first, head string) {
	t.Helper()
	dir = t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=gate", "-c", "user.email=gate@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	for i, msg := range []string{"first", "second"} {
		write(t, filepath.Join(dir, "README"), msg)
		git("add", "README")
		git("commit", "-q", "-m", msg)
		if i == 0 {
			first = git("rev-parse", "HEAD")
		}
	}
	return dir, first, git("rev-parse", "HEAD")
}

// TestE2EStatusAppsRoot runs `status --apps-root` on this repository's
// root: the live Application names its sources, the gate renders them from
// the checkout as check --apps-root does, and compares the cluster with
// that render.
func TestE2EStatusAppsRoot(t *testing.T) {
	kubectl := testutil.Tool(t, "KUBECTL", "kubectl")
	c := cluster.Start(t)
	bin := filepath.Dir(testutil.Bin(t, "kubectl-gate"))
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	root := testutil.Root(t)
	// A checkout without a remote takes every repoURL as its own; with a
	// remote, the Applications must name it.
	repoURL := "https://github.com/kubectl-gate/kubectl-gate.git"
	if remotes := render.GitRemotes(root); len(remotes) > 0 {
		repoURL = "https://" + remotes[0]
	}
	renderOf := func(path string) []*yaml.RNode {
		t.Helper()
		res, err := render.RenderArgo(render.ArgoSource{Dir: filepath.Join(root, filepath.FromSlash(path))}, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Resources
	}
	prod, platform := renderOf("examples/overlays/prod"), renderOf("examples/apps/platform")
	webImage := ""
	for _, obj := range prod {
		if obj.GetKind() == "Deployment" && obj.GetName() == "web" {
			n, err := obj.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name=web]", "image"))
			if err != nil || n == nil {
				t.Fatalf("no web image in the prod render: %v", err)
			}
			webImage = yaml.GetValue(n)
		}
	}
	const otherWeb = "ghcr.io/example-shop/web:1.4.1@sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	source := func(path string) string {
		return fmt.Sprintf("{repoURL: %q, targetRevision: main, path: %s}", repoURL, path)
	}

	livetest.InstallCRDs(t, c)
	livetest.InstallRender(t, c, livetest.App{Name: "prod", Revision: "abc1234", Source: "source: " + source("examples/overlays/prod")}, prod, nil)
	livetest.InstallRender(t, c, livetest.App{Name: "prod-drift", Revision: "abc1234", Source: "source: " + source("examples/overlays/prod")}, prod, map[string]string{webImage: otherWeb})
	livetest.InstallRender(t, c, livetest.App{Name: "prod-multi", Revision: "abc1234",
		Source: "sources: [" + source("examples/overlays/prod") + ", " + source("examples/apps/platform") + "]"}, append(prod, platform...), nil)
	livetest.InstallRender(t, c, livetest.App{Name: "prod-helm", Revision: "abc1234",
		Source: "sources: [" + source("examples/overlays/prod") + `, {repoURL: "https://charts.example", chart: shop, targetRevision: 1.4.2}]`}, prod, nil)

	cases := []struct {
		app  string
		code int
		says []string
	}{
		{"prod", 0, []string{"PASS", "expected, from the render (--apps-root . (spec.source.path examples/overlays/prod))",
			webImage + "  running in 1 pod(s)", "managed 3, expected 3 (--apps-root . (spec.source.path examples/overlays/prod))  ok"}},
		{"prod-drift", 1, []string{"[live-images]", otherWeb + ", which is not in the render (--apps-root .", webImage + "  NOT RUNNING", "managed 3, expected 3"}},
		{"prod-multi", 0, []string{"PASS", "managed 5, expected 5 (--apps-root . (spec.sources[0].path examples/overlays/prod, spec.sources[1].path examples/apps/platform))  ok"}},
		{"prod-helm", 3, []string{"no verdict", "Application argocd/prod-helm spec.sources[1] is not rendered from --apps-root .", "Helm chart shop"}},
	}
	for _, tc := range cases {
		began := time.Now()
		r := testutil.Run(t, root, "", env, kubectl, "gate", "status", tc.app, "--apps-root", ".", "--kubeconfig", c.Kubeconfig)
		took := time.Since(began)
		out := r.Stdout + r.Stderr
		t.Logf("kubectl gate status %s --apps-root .: exit %d in %s\n%s", tc.app, r.Code, took.Round(time.Millisecond), out)
		if r.Code != tc.code {
			t.Errorf("status %s --apps-root .: exit %d, want %d\n%s", tc.app, r.Code, tc.code, out)
			continue
		}
		for _, s := range tc.says {
			if !says(out, s) {
				t.Errorf("status %s --apps-root .: output lacks %q:\n%s", tc.app, s, out)
			}
		}
		if took > statusBudget {
			t.Errorf("status %s took %s, over %s", tc.app, took, statusBudget)
		}
	}
}
