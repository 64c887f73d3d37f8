package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// liveApp parses an Application as `status` reads it from the cluster.
func liveApp(t *testing.T, spec string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	doc := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop, namespace: argocd}\nspec:\n" + spec
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

// statusCheckout writes a git-less checkout: a kustomization, a plain directory,
// a chart and a kustomization of two objects.
func statusCheckout(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"deploy/kustomization.yaml": "resources: [cm.yaml]\n",
		"deploy/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
		"plain/quota.yaml":          "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\n",
		"chart/Chart.yaml":          "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"chart/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}-c', namespace: '{{ .Release.Namespace }}'}\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestAppsRender(t *testing.T) {
	root := statusCheckout(t)
	withRemote := statusCheckout(t)
	if err := os.MkdirAll(filepath.Join(withRemote, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withRemote, ".git", "config"), []byte("[remote \"origin\"]\n\turl = git@git.example:shop/deploy.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, root, spec string
		objects          []string // kind/namespace/name of the render
		from             string
		err              string
	}{
		{name: "kustomize source, with the Application's namespace override", root: root,
			spec:    "  source: {repoURL: https://git.example/any.git, path: deploy, kustomize: {namespace: shop}}\n",
			objects: []string{"ConfigMap/shop/a", "ConfigMap/shop/b"}, from: "(spec.source.path deploy)"},
		{name: "sources concatenated; a ref-only source renders nothing", root: root,
			spec: "  sources:\n  - {repoURL: https://git.example/any.git, path: deploy}\n  - {repoURL: https://git.example/any.git, ref: values}\n" +
				"  - {repoURL: https://git.example/any.git, path: ./plain, directory: {recurse: false}}\n",
			objects: []string{"ConfigMap//a", "ConfigMap//b", "ResourceQuota//q"},
			from:    "(spec.sources[0].path deploy, spec.sources[2].path ./plain)"},
		{name: "the repository's own remote", root: withRemote,
			spec:    "  source: {repoURL: https://git.example/shop/deploy, path: plain}\n",
			objects: []string{"ResourceQuota//q"}, from: "(spec.source.path plain)"},
		{name: "the root itself", root: root,
			spec:    "  source: {repoURL: https://git.example/any.git, path: plain}\n",
			objects: []string{"ResourceQuota//q"}},
		{name: "Helm chart from a Helm repository", root: root,
			spec: "  sources:\n  - {repoURL: https://git.example/any.git, path: deploy}\n  - {repoURL: https://charts.example, chart: web, targetRevision: 1.0.0}\n",
			err:  "Application argocd/shop spec.sources[1] is not rendered from --apps-root " + root + ": Helm chart web from https://charts.example"},
		{name: "Helm chart in the checkout: release and namespace from the Application", root: root,
			spec:    "  source: {repoURL: https://git.example/any.git, path: chart, helm: {releaseName: web}}\n  destination: {namespace: shop}\n",
			objects: []string{"ConfigMap/shop/web-c"}, from: "(spec.source.path chart)"},
		{name: "plugin", root: root,
			spec: "  source: {repoURL: https://git.example/any.git, path: deploy, plugin: {name: cmp}}\n",
			err:  "spec.source is not rendered from --apps-root " + root + `: spec.source.path "deploy": a config management plugin renders it`},
		{name: "another repository", root: withRemote,
			spec: "  source: {repoURL: https://git.example/other.git, path: deploy}\n",
			err:  "spec.source is not rendered from --apps-root " + withRemote + ": repository https://git.example/other.git is not the one checked out"},
		{name: "path leaves the repository", root: root,
			spec: "  source: {repoURL: https://git.example/any.git, path: ../elsewhere}\n",
			err:  `Application argocd/shop: spec.source.path "../elsewhere" leaves the repository`},
		{name: "path missing", root: root,
			spec: "  source: {repoURL: https://git.example/any.git, path: nope}\n",
			err:  `Application argocd/shop spec.source: spec.source.path "nope"`},
		{name: "no source", root: root, spec: "  project: default\n", err: "names no source that deploys manifests"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, from, err := ExpectedFromApplication(t.Context(), liveApp(t, c.spec), c.root, nil, "")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				if res != nil {
					t.Errorf("a source that is not rendered must not leave a partial render: %d objects", len(res))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res {
				got = append(got, r.GetKind()+"/"+r.GetNamespace()+"/"+r.GetName())
			}
			if strings.Join(got, " ") != strings.Join(c.objects, " ") {
				t.Errorf("render %v, want %v", got, c.objects)
			}
			if !strings.HasPrefix(from, "--apps-root "+c.root+" (") || !strings.Contains(from, c.from) {
				t.Errorf("from %q, want --apps-root %s %s", from, c.root, c.from)
			}
		})
	}
}

// TestAppsRenderThisRepository renders the prod overlay of this
// repository's examples as the source of a live Application.
func TestAppsRenderThisRepository(t *testing.T) {
	root := testutil.Root(t)
	repoURL := "https://github.com/kubectl-gate/kubectl-gate.git"
	if remotes := render.GitRemotes(root); len(remotes) > 0 {
		repoURL = "https://" + remotes[0]
	}
	t.Chdir(root)
	res, from, err := ExpectedFromApplication(t.Context(), liveApp(t, "  source: {repoURL: "+repoURL+", targetRevision: main, path: examples/overlays/prod}\n"), ".", nil, "main")
	if err != nil {
		t.Fatal(err)
	}
	if from != "--apps-root . (spec.source.path examples/overlays/prod)" {
		t.Errorf("from %q", from)
	}
	deployments := 0
	for _, r := range res {
		if r.GetKind() == "Deployment" && r.GetNamespace() == "shop-prod" {
			deployments++
		}
	}
	if deployments != 2 {
		t.Errorf("want the web and worker Deployments in shop-prod, got %d in %d objects", deployments, len(res))
	}
}

// gitRepo commits files on main and each branch's files on a branch of
// its own, and returns the repository with main checked out.
func gitRepo(t *testing.T, main map[string]string, branches map[string]map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	testutil.WriteFiles(t, dir, main)
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	for b, files := range branches {
		git("checkout", "-q", "-b", b, "main")
		testutil.WriteFiles(t, dir, files)
		git("add", "-A")
		git("commit", "-q", "-m", b)
		git("checkout", "-q", "main")
	}
	return dir
}

// status --apps-root renders each source at the revision it tracks, as
// check does: an Application tracking release-1 is compared with
// release-1's render, not the checkout's (issue 19).
func TestAppsRenderRevisions(t *testing.T) {
	cm := func(level string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {level: " + level + "}\n"
	}
	root := gitRepo(t, map[string]string{
		"deploy/kustomization.yaml": "resources: [cm.yaml]\n",
		"deploy/cm.yaml":            cm("main"),
		"chart/Chart.yaml":          "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"chart/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chart}\ndata: {level: '{{ .Values.level }}'}\n",
		"values/prod.yaml":          "level: main\n",
	}, map[string]map[string]string{
		"release-1": {"deploy/cm.yaml": cm("release"), "values/prod.yaml": "level: release\n"},
	})
	const repo = "https://git.example/shop/deploy.git"
	refApp := func(chartRev, valuesRev string) string {
		return "  sources:\n  - {repoURL: " + repo + ", targetRevision: " + chartRev + ", path: chart, helm: {valueFiles: [$values/values/prod.yaml]}}\n" +
			"  - {repoURL: " + repo + ", targetRevision: " + valuesRev + ", ref: values}\n"
	}
	for _, c := range []struct {
		name, spec, target string
		level, from, err   string
	}{
		{name: "HEAD", spec: "  source: {repoURL: " + repo + ", targetRevision: HEAD, path: deploy}\n", level: "main"},
		{name: "the checkout's branch", spec: "  source: {repoURL: " + repo + ", targetRevision: main, path: deploy}\n", level: "main"},
		{name: "another branch", spec: "  source: {repoURL: " + repo + ", targetRevision: release-1, path: deploy}\n", level: "release",
			from: "spec.source.path deploy at revision release-1 ("},
		{name: "the target branch", spec: "  source: {repoURL: " + repo + ", targetRevision: release-1, path: deploy}\n", target: "release-1", level: "main"},
		{name: "unknown revision", spec: "  source: {repoURL: " + repo + ", targetRevision: release-9, path: deploy}\n",
			err: `revision release-9 is not the checkout's revision and the local git history cannot render it: no branch, tag or commit "release-9"`},
		{name: "$ref values at their own revision", spec: refApp("main", "release-1"), level: "release"},
		{name: "$ref values at the checkout", spec: refApp("release-1", "main"), level: "main"},
		{name: "$ref values at an unknown revision", spec: refApp("main", "release-9"),
			err: "the ref source values cannot be read: spec.sources[1] (ref values): revision release-9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			res, from, err := ExpectedFromApplication(t.Context(), liveApp(t, c.spec), root, []string{repo}, c.target)
			if left, _ := filepath.Glob(filepath.Join(tmp, "kubectl-gate-rev-*")); len(left) > 0 {
				t.Errorf("worktrees left: %v", left)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].GetDataMap()["level"] != c.level {
				t.Errorf("render %d objects, want one with level %s: %v", len(res), c.level, res[0].MustString())
			}
			if !strings.Contains(from, c.from) {
				t.Errorf("from %q, want %q", from, c.from)
			}
		})
	}
}
