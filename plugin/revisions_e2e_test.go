package plugin_test

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// Issue 19, item 1: a source renders from the revision it tracks. Before,
// an Application tracking branch release-1 (nginx:latest) was rendered
// from the checkout of main (pinned) and passed.

const revRepoURL = "https://github.com/example/revisions.git"

// gitIn runs git in dir and returns its trimmed output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// branchCommit commits files on a new branch from main and returns to main.
func branchCommit(t *testing.T, repo, branch string, files map[string]string) string {
	t.Helper()
	gitIn(t, repo, "checkout", "-q", "-b", branch, "main")
	testutil.WriteFiles(t, repo, files)
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", branch)
	sha := gitIn(t, repo, "rev-parse", "HEAD")
	gitIn(t, repo, "checkout", "-q", "main")
	return sha
}

// revisionsRepo: main (tag v1.0.0) deploys web pinned; branch release-1
// (tag v1.3.0) deploys nginx:latest; branch broken has a kustomization
// that does not build.
func revisionsRepo(t *testing.T) (repo, release string) {
	t.Helper()
	repo = commitRepo(t, map[string]string{
		"deploy/web/kustomization.yaml": "resources: [deployment.yaml]\n",
		"deploy/web/deployment.yaml":    waiveDeployment("web", "nginx@"+pinnedDigest, ""),
	})
	gitIn(t, repo, "tag", "v1.0.0")
	release = branchCommit(t, repo, "release-1", map[string]string{"deploy/web/deployment.yaml": waiveDeployment("web", "nginx:latest", "")})
	gitIn(t, repo, "tag", "v1.3.0", release)
	branchCommit(t, repo, "broken", map[string]string{"deploy/web/kustomization.yaml": "resources: [deployment.yaml, missing.yaml]\n"})
	return repo, release
}

func revApp(rev string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + revRepoURL + `, targetRevision: "` + rev + `", path: deploy/web}
  destination: {server: https://kubernetes.default.svc, namespace: shop}
`
}

// noRevWorktreeLeft fails when the repository lists a worktree besides its
// own, or a kubectl-gate-rev-* directory is left in tmp.
func noRevWorktreeLeft(t *testing.T, repo, tmp string) {
	t.Helper()
	if out := gitIn(t, repo, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "kubectl-gate-rev-*")); len(left) > 0 {
		t.Errorf("temporary worktrees left: %v", left)
	}
}

func TestE2ERevisions(t *testing.T) {
	repo, release := revisionsRepo(t)
	tmp := t.TempDir()
	check := func(rev string, extra ...string) testutil.Result {
		t.Helper()
		testutil.WriteFiles(t, repo, map[string]string{"apps/web.yaml": revApp(rev)})
		args := append([]string{"check", "-f", "apps/", "--apps-root", ".", "--repo-url", revRepoURL}, extra...)
		r := gateIn(t, repo, tmp, args...)
		noRevWorktreeLeft(t, repo, tmp)
		return r
	}
	for _, tc := range []struct {
		rev   string
		extra []string
		code  int
		want  []string
	}{
		// The checkout's own revision: its working tree, as before.
		{rev: "main", code: 0},
		{rev: "HEAD", code: 0},
		{rev: "", code: 0},
		// Another branch, tag or commit of the history: red from there.
		{rev: "release-1", code: 1, want: []string{"nginx:latest", "deploy/web at revision release-1 (" + release[:12] + ")", "[deploy/web/deployment.yaml]"}},
		{rev: "release-1", extra: []string{"-o", "json"}, code: 1, want: []string{`"path": "deploy/web/deployment.yaml"`}},
		{rev: "release-1", extra: []string{"-o", "sarif"}, code: 1, want: []string{`"uri": "deploy/web/deployment.yaml"`}},
		{rev: "refs/heads/release-1", code: 1, want: []string{"nginx:latest"}},
		{rev: "v1.3.0", code: 1, want: []string{"nginx:latest"}},
		{rev: release, code: 1, want: []string{"nginx:latest"}},
		{rev: release[:9], code: 1, want: []string{"nginx:latest"}},
		{rev: "v1.0.0", code: 0},
		// Semver ranges: the highest local tag that matches, as Argo CD.
		{rev: "1.*", code: 1, want: []string{"nginx:latest", "revision 1.*"}},
		{rev: ">=1.0.0 <2", code: 1, want: []string{"nginx:latest"}},
		{rev: "~1.0", code: 0},
		{rev: "3.*", code: 3, want: []string{"[argocd-source-not-rendered]", `no local tag matches semver range "3.*"`}},
		// Unknown: no verdict, naming the app, its revision and the checkout's.
		{rev: "release-2", code: 3, want: []string{"Application/web (ns argocd)\n  ERROR [argocd-source-not-rendered]", `revision release-2 is not the checkout's revision`, `no branch, tag or commit "release-2"`, "the checkout . is main at "}},
		{rev: "release-2", extra: []string{"--exclude-app", "argocd/web"}, code: 0, want: []string{"excluded by", `"argocd/web"`}},
		// The branch the checkout merges into renders from the checkout.
		{rev: "release-1", extra: []string{"--target-branch", "release-1"}, code: 0},
		// A render that fails in the worktree: no verdict, worktree gone.
		{rev: "broken", code: 3, want: []string{"missing.yaml"}},
	} {
		r := check(tc.rev, tc.extra...)
		if strings.Contains(r.Stdout+r.Stderr, "kubectl-gate-rev-") {
			t.Errorf("targetRevision %q %v: the output names the temporary worktree\n%s%s", tc.rev, tc.extra, r.Stdout, r.Stderr)
		}
		if r.Code != tc.code {
			t.Errorf("targetRevision %q %v: exit %d, want %d\n%s%s", tc.rev, tc.extra, r.Code, tc.code, r.Stdout, r.Stderr)
			continue
		}
		for _, w := range tc.want {
			if !says(r.Stdout+r.Stderr, w) {
				t.Errorf("targetRevision %q %v: output lacks %q\n%s%s", tc.rev, tc.extra, w, r.Stdout, r.Stderr)
			}
		}
	}

	// A feature branch merging into main, its commit unpinning web: an app
	// tracking main renders the checkout (what main will be).
	gitIn(t, repo, "checkout", "-q", "-b", "feature")
	testutil.WriteFiles(t, repo, map[string]string{"deploy/web/deployment.yaml": waiveDeployment("web", "nginx:latest", "")})
	gitIn(t, repo, "commit", "-q", "-am", "unpin")
	if r := check("main", "--target-branch", "main"); r.Code != 1 || !strings.Contains(r.Stdout, "nginx:latest") {
		t.Errorf("feature branch, app tracking its target branch: exit %d, want 1 from the checkout\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Without --target-branch (and no remote default branch) main is just
	// another branch of the history: rendered from it, pinned.
	if r := check("main"); r.Code != 0 {
		t.Errorf("feature branch, app tracking main, no target branch: exit %d, want 0 from main's worktree\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// A revision that is the checkout's commit renders the working tree,
	// uncommitted changes included.
	testutil.WriteFiles(t, repo, map[string]string{"deploy/web/deployment.yaml": waiveDeployment("web", "nginx:1.27", "")})
	if r := check("feature"); r.Code != 1 || !strings.Contains(r.Stdout, "nginx:1.27") {
		t.Errorf("app tracking the checkout's branch, working tree changed: exit %d, want 1 naming nginx:1.27\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// ApplicationSet git generators read the directories of their revision.
func TestE2ERevisionsApplicationSet(t *testing.T) {
	repo, _ := revisionsRepo(t)
	branchCommit(t, repo, "envs", map[string]string{"envs/prod/kustomization.yaml": "resources: [../../deploy/web]\n"})
	tmp := t.TempDir()
	set := func(rev string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: web, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - git: {repoURL: ` + revRepoURL + `, revision: "` + rev + `", directories: [{path: "envs/*"}]}
  template:
    metadata: {name: 'web-{{.path.basename}}'}
    spec:
      project: default
      source: {repoURL: ` + revRepoURL + `, targetRevision: "` + rev + `", path: '{{.path.path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: shop}
`
	}
	for _, tc := range []struct {
		rev  string
		code int
		want string
	}{
		{"envs", 0, `"resources": 3`},           // only branch envs has envs/prod: the set, web-prod, its Deployment
		{"main", 1, "generates no Application"}, // no envs/ on main: nothing generated
		{"nope", 3, `revision nope is not the checkout's revision`},
	} {
		testutil.WriteFiles(t, repo, map[string]string{"apps/set.yaml": set(tc.rev)})
		r := gateIn(t, repo, tmp, "check", "-f", "apps/", "--apps-root", ".", "--repo-url", revRepoURL, "-o", "json")
		noRevWorktreeLeft(t, repo, tmp)
		if strings.Contains(r.Stdout+r.Stderr, "kubectl-gate-rev-") {
			t.Errorf("rev %s: the output names the temporary worktree\n%s%s", tc.rev, r.Stdout, r.Stderr)
		}
		if r.Code != tc.code || !says(r.Stdout, tc.want) {
			t.Errorf("git generator revision %q: exit %d, want %d with %q\n%s%s", tc.rev, r.Code, tc.code, tc.want, r.Stdout, r.Stderr)
		}
	}
}

func fluxSync(ref string) string {
	return `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: web, namespace: flux-system}
spec: {interval: 1m, url: ` + revRepoURL + `, ref: ` + ref + `}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: web, namespace: flux-system}
spec: {interval: 10m, path: ./deploy/web, prune: true, targetNamespace: shop, sourceRef: {kind: GitRepository, name: web}}
`
}

// A Flux GitRepository's spec.ref: the first sighting was a
// tenant tracking branch dev-team (fluxcd/flux2-multi-tenancy).
func TestE2ERevisionsFlux(t *testing.T) {
	repo, release := revisionsRepo(t)
	tmp := t.TempDir()
	for _, tc := range []struct {
		ref  string
		code int
		want string
	}{
		{"{branch: main}", 0, ""},
		{"{branch: release-1}", 1, "nginx:latest"},
		{"{tag: v1.3.0}", 1, "nginx:latest"},
		{"{semver: '>=1.0.0 <1.1.0'}", 0, ""},
		{"{semver: '1.x'}", 1, "nginx:latest"},
		{"{commit: " + release + "}", 1, "nginx:latest"},
		{"{name: refs/heads/release-1}", 1, "nginx:latest"},
		{"{branch: dev-team}", 3, "Kustomization/web (ns flux-system)\n  " + `[flux-not-rendered] spec: was not rendered (GitRepository flux-system/web: ref branch: dev-team is not the checkout's revision`},
	} {
		testutil.WriteFiles(t, repo, map[string]string{"clusters/prod/sync.yaml": fluxSync(tc.ref)})
		r := gateIn(t, repo, tmp, "check", "-R", "-f", "clusters/", "--apps-root", ".", "--repo-url", revRepoURL)
		noRevWorktreeLeft(t, repo, tmp)
		if strings.Contains(r.Stdout+r.Stderr, "kubectl-gate-rev-") {
			t.Errorf("ref %s: the output names the temporary worktree\n%s%s", tc.ref, r.Stdout, r.Stderr)
		}
		if r.Code != tc.code || !says(r.Stdout, tc.want) {
			t.Errorf("ref %s: exit %d, want %d with %q\n%s%s", tc.ref, r.Code, tc.code, tc.want, r.Stdout, r.Stderr)
		}
	}
	// --exclude-app takes it out of scope, listed.
	testutil.WriteFiles(t, repo, map[string]string{"clusters/prod/sync.yaml": fluxSync("{branch: dev-team}")})
	if r := gateIn(t, repo, tmp, "check", "-R", "-f", "clusters/", "--apps-root", ".", "--repo-url", revRepoURL, "--exclude-app", "flux-system/web"); r.Code != 0 || !strings.Contains(r.Stdout, "excluded by") {
		t.Errorf("excluded: exit %d, want 0 listing it\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// The worktree goes when the run is stopped: the deadline and SIGINT
// while the other revision's render hangs on a remote resource.
func TestE2ERevisionsStopped(t *testing.T) {
	repo, _ := revisionsRepo(t)
	branchCommit(t, repo, "hang", map[string]string{"deploy/web/kustomization.yaml": "resources:\n- deployment.yaml\n- http://" + hangingServer(t) + "/remote.yaml\n"})
	testutil.WriteFiles(t, repo, map[string]string{"apps/web.yaml": revApp("hang")})
	tmp := t.TempDir()
	args := []string{"check", "-f", "apps/", "--apps-root", ".", "--repo-url", revRepoURL}
	if r := gateIn(t, repo, tmp, append(args, "--timeout", "2s")...); r.Code != 3 || !strings.Contains(r.Stderr, "--timeout 2s exceeded") {
		t.Errorf("--timeout: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noRevWorktreeLeft(t, repo, tmp)

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(testutil.Bin(t, "kubectl-gate"), args...)
		cmd.Dir, cmd.Env = repo, append(os.Environ(), "TMPDIR="+tmp)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			if left, _ := filepath.Glob(filepath.Join(tmp, "kubectl-gate-rev-*", "deploy")); len(left) > 0 {
				break // checked out: the render of branch hang is running
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("no worktree appeared\n%s", stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(stderr.String(), "interrupted by") {
			t.Errorf("%v: exit %d\n%s", sig, code, stderr.String())
		}
		noRevWorktreeLeft(t, repo, tmp)
	}
}

// Issue 19, item 4, across renders: two Applications of an app of apps,
// each the child of another parent, render the same ConfigMap for one
// cluster. Each parent's render is a unit of its own, and before the rule
// compared only the Applications of one unit: it passed.
func TestE2ESharedObjectAcrossUnits(t *testing.T) {
	parent := func(name, path string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + name + `, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + revRepoURL + `, path: ` + path + `}
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
`
	}
	child := func(name, path, ns string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + name + `, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + revRepoURL + `, path: ` + path + `}
  destination: {server: https://kubernetes.default.svc, namespace: ` + ns + `}
`
	}
	settings := func(level string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared-settings}\ndata: {level: " + level + "}\n"
	}
	fluxChild := `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: platform, namespace: flux-system}
spec: {interval: 1m, url: ` + revRepoURL + `, ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: team-b, namespace: flux-system}
spec: {interval: 10m, path: ./teams/b, prune: true, targetNamespace: shared, sourceRef: {kind: GitRepository, name: platform}}
`
	for _, tc := range []struct {
		name   string
		childB string // children/b/app.yaml
		levelB string
		code   int
		want   []string
		absent string
	}{
		{"different content", child("team-b", "teams/b", "shared"), "info", 1, []string{
			"Application/team-b (ns argocd)\n  ERROR [app-shared-object]: ConfigMap/shared-settings (ns shared) is rendered by both Application argocd/team-a (spec.source teams/a) and Application argocd/team-b (spec.source teams/b) for cluster in-cluster, with different content",
		}, ""},
		{"identical content", child("team-b", "teams/b", "shared"), "debug", 0, []string{
			"Application/team-b (ns argocd)\n  WARNING [app-shared-object]: ConfigMap/shared-settings (ns shared) is rendered identically by Application argocd/team-a",
		}, ""},
		{"other namespace", child("team-b", "teams/b", "other"), "info", 0, nil, "app-shared-object"},
		{"an Application and a Flux Kustomization", fluxChild, "info", 1, []string{
			"Kustomization/team-b (ns flux-system)\n  ERROR [app-shared-object]: ConfigMap/shared-settings (ns shared) is rendered by both Application argocd/team-a (spec.source teams/a) and Flux Kustomization flux-system/team-b",
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			testutil.WriteFiles(t, dir, map[string]string{
				"apps/parents.yaml":          parent("parent-a", "children/a") + "---\n" + parent("parent-b", "children/b"),
				"children/a/app.yaml":        child("team-a", "teams/a", "shared"),
				"children/b/app.yaml":        tc.childB,
				"teams/a/kustomization.yaml": "resources: [settings.yaml]\n",
				"teams/a/settings.yaml":      settings("debug"),
				"teams/b/kustomization.yaml": "resources: [settings.yaml]\n",
				"teams/b/settings.yaml":      settings(tc.levelB),
			})
			r := gateIn(t, dir, t.TempDir(), "check", "-f", "apps/", "--apps-root", ".", "--repo-url", revRepoURL)
			if r.Code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			for _, w := range tc.want {
				if !says(r.Stdout, w) {
					t.Errorf("output lacks %q\n%s%s", w, r.Stdout, r.Stderr)
				}
			}
			if tc.absent != "" && strings.Contains(r.Stdout, tc.absent) {
				t.Errorf("output has %q\n%s", tc.absent, r.Stdout)
			}
			if n := strings.Count(r.Stdout, "[app-shared-object]"); len(tc.want) > 0 && n != 1 {
				t.Errorf("%d app-shared-object findings, want the pair once\n%s", n, r.Stdout)
			}
		})
	}
}

// Two overlays rendering one object for one namespace are compared as
// the cluster receives it: the same ConfigMap patched alike in envs/eu and
// envs/us (kustomize's transformations annotation names each overlay's
// kustomization), a namespace written in one and the destination's in the
// other, keys in another order, are identical (a warning, exit 0); a
// patch that sets another value is an error. Before, the YAML text was
// compared and every identical case was an error "with different content"
// (found on rollouts-demo's examples/istio and istio-subset).
func TestE2ESharedObjectComparesAsApplied(t *testing.T) {
	app := func(name, path string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + name + `, namespace: argocd}
spec:
  project: default
  source: {repoURL: ` + revRepoURL + `, path: ` + path + `}
  destination: {server: https://kubernetes.default.svc, namespace: web}
`
	}
	overlay := func(color string) string {
		return "resources: [../../base]\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: web}\n    data: {color: " + color + "}\n"
	}
	base := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {color: blue, size: large}\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		code  int
		want  string
	}{
		{"two overlays patching alike", map[string]string{
			"envs/eu/kustomization.yaml": overlay("green"),
			"envs/us/kustomization.yaml": overlay("green"),
		}, 0, "WARNING [app-shared-object]: ConfigMap/web (ns web) is rendered identically by Application argocd/web-eu (spec.source envs/eu) and Application argocd/web-us (spec.source envs/us)"},
		{"a namespace written and a kustomize namespace:, keys in another order", map[string]string{
			"envs/eu/kustomization.yaml": "resources: [cm.yaml]\n",
			"envs/eu/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: web}\ndata: {color: green, size: large}\n",
			"envs/us/kustomization.yaml": "namespace: web\nresources: [cm.yaml]\n",
			"envs/us/cm.yaml":            "kind: ConfigMap\napiVersion: v1\ndata:\n  size: \"large\"\n  color: green\nmetadata:\n  name: web\n",
		}, 0, "WARNING [app-shared-object]: ConfigMap/web (ns web) is rendered identically by Application argocd/web-eu"},
		{"two overlays patching another value", map[string]string{
			"envs/eu/kustomization.yaml": overlay("green"),
			"envs/us/kustomization.yaml": overlay("red"),
		}, 1, "ERROR [app-shared-object]: ConfigMap/web (ns web) is rendered by both Application argocd/web-eu (spec.source envs/eu) and Application argocd/web-us (spec.source envs/us) for cluster in-cluster, with different content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"apps/web.yaml":           app("web-eu", "envs/eu") + "---\n" + app("web-us", "envs/us"),
				"base/kustomization.yaml": "resources: [cm.yaml]\n",
				"base/cm.yaml":            base,
			}
			maps.Copy(files, tc.files)
			testutil.WriteFiles(t, dir, files)
			r := gateIn(t, dir, t.TempDir(), "check", "-f", "apps/", "--apps-root", ".", "--repo-url", revRepoURL)
			if r.Code != tc.code || !strings.Contains(r.Stdout, tc.want) || strings.Count(r.Stdout, "[app-shared-object]") != 1 {
				t.Errorf("exit %d, want %d and the one finding %q\n%s%s", r.Code, tc.code, tc.want, r.Stdout, r.Stderr)
			}
		})
	}
}

// A multi-source Application's Helm values from a $ref source are read at
// the ref source's own targetRevision: Argo CD checks each source out at
// its revision. Before, the ref was read from the checkout whatever it
// named, so values on branch values-next (nginx:latest) passed because
// main's were pinned.
func TestE2ERevisionsHelmRef(t *testing.T) {
	repo := commitRepo(t, map[string]string{
		"charts/web/Chart.yaml":                "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/values.yaml":               "image: nginx@" + pinnedDigest + "\n",
		"charts/web/templates/deployment.yaml": waiveDeployment("web", "{{ .Values.image }}", ""),
		"values/prod.yaml":                     "image: nginx@" + pinnedDigest + "\n",
	})
	next := branchCommit(t, repo, "values-next", map[string]string{"values/prod.yaml": "image: nginx:latest\n"})
	tmp := t.TempDir()
	app := func(chartRev, valuesRev string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  sources:
  - repoURL: ` + revRepoURL + `
    targetRevision: "` + chartRev + `"
    path: charts/web
    helm: {valueFiles: [$values/values/prod.yaml]}
  - {repoURL: ` + revRepoURL + `, targetRevision: "` + valuesRev + `", ref: values}
  destination: {server: https://kubernetes.default.svc, namespace: shop}
`
	}
	for _, tc := range []struct {
		chartRev, valuesRev string
		code                int
		want                []string
	}{
		{"main", "main", 0, nil},
		{"HEAD", "", 0, nil},
		// The values at their own revision: red, though the chart is main's.
		{"main", "values-next", 1, []string{"nginx:latest"}},
		{"main", next[:12], 1, []string{"nginx:latest"}},
		// The chart at another revision, the values at the checkout's.
		{"values-next", "main", 0, nil},
		// A ref revision the history does not have: no verdict naming it.
		{"main", "values-gone", 3, []string{"the ref source values cannot be read", `spec.sources[1] (ref values): revision values-gone is not the checkout's revision`}},
	} {
		testutil.WriteFiles(t, repo, map[string]string{"apps/web.yaml": app(tc.chartRev, tc.valuesRev)})
		r := gateIn(t, repo, tmp, "check", "-f", "apps/", "--apps-root", ".", "--repo-url", revRepoURL)
		noRevWorktreeLeft(t, repo, tmp)
		if r.Code != tc.code {
			t.Errorf("chart at %q, values at %q: exit %d, want %d\n%s%s", tc.chartRev, tc.valuesRev, r.Code, tc.code, r.Stdout, r.Stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(r.Stdout+r.Stderr, w) {
				t.Errorf("chart at %q, values at %q: output lacks %q\n%s%s", tc.chartRev, tc.valuesRev, w, r.Stdout, r.Stderr)
			}
		}
	}
}
