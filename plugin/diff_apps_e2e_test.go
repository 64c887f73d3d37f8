package plugin_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

const diffRepo = "https://git.example.com/platform/deploy.git"

func diffApp(name, path string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + name + `, namespace: argocd}
spec:
  project: default
  source: {repoURL: '` + diffRepo + `', targetRevision: main, path: ` + path + `}
  destination: {server: 'https://kubernetes.default.svc', namespace: shop}
`
}

// appsCommits: three Applications. At head, shop's overlay changes its
// image (a new finding), cart's component stops adding a ConfigMap (a
// kustomization that then contributes nothing to the render, so only the
// walk of the kustomization tree knows cart read it), and blog, whose
// finding an exception waives, is untouched.
func appsCommits() []map[string]string {
	overlay := func(app string) string {
		return "resources: [../../base]\nnamePrefix: " + app + "-\ncomponents: [../../../components/common]\n"
	}
	base := map[string]string{
		"apps/kustomization.yaml":               "resources: [shop.yaml, blog.yaml, cart.yaml]\n",
		"apps/shop.yaml":                        diffApp("shop", "shop/overlays/prod"),
		"apps/blog.yaml":                        diffApp("blog", "blog/overlays/prod"),
		"apps/cart.yaml":                        diffApp("cart", "cart/overlays/prod"),
		"components/common/kustomization.yaml":  "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [cm.yaml]\n",
		"components/common/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: common, namespace: shop}\ndata: {a: b}\n",
		"shop/base/kustomization.yaml":          "resources: [deploy.yaml]\n",
		"shop/base/deploy.yaml":                 waiveDeployment("web", "ghcr.io/shop/web:1.4@"+pinnedDigest, ""),
		"shop/overlays/prod/kustomization.yaml": "resources: [../../base]\n",
		"blog/base/kustomization.yaml":          "resources: [deploy.yaml]\n",
		"blog/base/deploy.yaml":                 waiveDeployment("blog", "ghcr.io/shop/blog:2.0", ""),
		"blog/overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: blog-\n",
		"cart/base/kustomization.yaml":          "resources: [deploy.yaml]\n",
		"cart/base/deploy.yaml":                 waiveDeployment("cart", "ghcr.io/shop/cart:1.0@"+pinnedDigest, ""),
		"cart/overlays/prod/kustomization.yaml": overlay("cart"),
	}
	head := map[string]string{
		"shop/overlays/prod/kustomization.yaml": "resources: [../../base]\npatches:\n- patch: |\n    {apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: shop}, spec: {template: {spec: {containers: [{name: web, image: 'ghcr.io/shop/web:1.5'}]}}}}\n",
		"components/common/kustomization.yaml":  "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- target: {kind: Service}\n  patch: '[{\"op\": \"add\", \"path\": \"/metadata/labels/x\", \"value\": \"y\"}]'\n",
	}
	return []map[string]string{base, head}
}

// TestE2EDiffOnlyWhatChanged: with --apps-root, diff --base renders at the
// base only the apps whose render can have changed; blog, which nothing
// touched, is listed unchanged and neither rendered again nor checked (in
// every format; its exception is not called unused); shop's image change and cart's lost
// ConfigMap (read through a component that contributes nothing at head)
// are shown.
func TestE2EDiffOnlyWhatChanged(t *testing.T) {
	repo := commitRepo(t, appsCommits()...)
	cfg := filepath.Join(t.TempDir(), "gate.yaml")
	exc := `  exceptions:
  - rules: [image-digest]
    match: {kind: Deployment, namespace: shop, name: blog-blog}
    reason: vendor publishes tags only (OPS-12)
    owner: team-blog
    expires: 2999-12-31
`
	if err := os.WriteFile(cfg, []byte(gateConfig(exc)), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	args := []string{"diff", "--base", "HEAD~1", "-k", "apps", "--apps-root", ".", "--repo-url", diffRepo, "--config", cfg}
	outputs := map[string]string{}
	for _, format := range []string{"text", "json", "markdown", "html"} {
		r := gateIn(t, repo, tmp, append(args, "-o", format)...)
		if r.Code != 1 {
			t.Fatalf("-o %s: exit %d, want 1 (shop's new image-digest)\n%s%s", format, r.Code, r.Stdout, r.Stderr)
		}
		outputs[format] = r.Stdout
		noWorktreeLeft(t, repo, tmp)
	}
	text := outputs["text"]
	for _, s := range []string{
		"findings: 1 new (1 error(s)), 0 fixed, 0 unchanged",
		"(1 neither rendered again nor checked: nothing they read changed)",
		`"ghcr.io/shop/web:1.4@` + pinnedDigest + `" → "ghcr.io/shop/web:1.5"`,
		"- ConfigMap shop/cart-common",
		"unchanged: -k apps; Application argocd/blog spec.source from blog/overlays/prod",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
	if r := gateIn(t, repo, tmp, args...); !strings.Contains(r.Stderr, "INFO: 1 app(s) neither rendered again nor checked") {
		t.Errorf("stderr does not say that one app was not checked:\n%s", r.Stderr)
	}
	if strings.Contains(text, "[exception-unused]") || strings.Contains(outputs["json"], `"exception-unused"`) {
		t.Errorf("the exception of the app not checked again is called unused:\n%s", text)
	}
	var doc struct {
		Counts struct {
			NotRenderedAgain int `json:"notRenderedAgain"`
		}
		Units []struct {
			Input            string
			NotRenderedAgain bool `json:"notRenderedAgain"`
		}
	}
	if err := json.Unmarshal([]byte(outputs["json"]), &doc); err != nil {
		t.Fatal(err)
	}
	again := map[string]bool{}
	for _, u := range doc.Units {
		again[strings.Fields(u.Input)[1]] = u.NotRenderedAgain
	}
	if doc.Counts.NotRenderedAgain != 1 || !again["argocd/blog"] || again["argocd/shop"] || again["argocd/cart"] {
		t.Errorf("json: want only blog neither rendered again nor checked:\n%s", outputs["json"])
	}
	for _, f := range []string{"markdown", "html"} {
		if !strings.Contains(outputs[f], "1 neither rendered again nor checked") || !strings.Contains(outputs[f], "argocd/blog") {
			t.Errorf("-o %s does not list blog as unchanged and not checked:\n%s", f, outputs[f])
		}
	}
	// Every human format says what the diff did not judge in blog.
	for _, f := range []string{"text", "markdown", "html"} {
		for _, s := range []string{"1 app(s) unchanged: not rendered again or checked", "exception-unused", "image-resolve"} {
			if !strings.Contains(outputs[f], s) {
				t.Errorf("-o %s does not say %q:\n%s", f, s, outputs[f])
			}
		}
	}
}

// TestE2ESelftestWaivedMutant: an exception that waives the rule a mutant
// must trip, on the object the mutant changes, makes selftest fail naming
// the exception (the gate would let that change through); an exception
// for another rule on the same object does not.
func TestE2ESelftestWaivedMutant(t *testing.T) {
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"app/kustomization.yaml": "resources: [web.yaml]\n",
		"app/web.yaml":           waiveDeployment("web", "ghcr.io/shop/web:1.4@"+pinnedDigest, ""),
	})
	for _, c := range []struct {
		rule string
		code int
	}{{"image-digest", 1}, {"image-registry", 0}} {
		cfg := filepath.Join(dir, c.rule+".yaml")
		mustWrite(t, cfg, gateConfig(`  exceptions:
  - rules: [`+c.rule+`]
    match: {kind: Deployment, namespace: shop, name: web}
    reason: vendor publishes tags only (OPS-12)
    owner: team-shop
    expires: 2999-12-31
`))
		r := testutil.Run(t, dir, "", nil, testutil.Bin(t, "kubectl-gate"), "selftest", "-k", "app", "--config", cfg)
		if r.Code != c.code {
			t.Errorf("exception for %s: exit %d, want %d\n%s%s", c.rule, r.Code, c.code, r.Stdout, r.Stderr)
		}
		waived := strings.Contains(r.Stderr, "spec.exceptions[0] (owner team-shop, expires 2999-12-31, reason: vendor publishes tags only (OPS-12)) waives it: while that waiver stands, rule image-digest cannot stop a change to this object")
		if waived != (c.code == 1) || strings.Contains(r.Stdout, "image-digest") && c.code == 1 && !strings.Contains(r.Stdout, "WAIVED") {
			t.Errorf("exception for %s: waived message %t\n%s%s", c.rule, waived, r.Stdout, r.Stderr)
		}
	}
}

// TestE2EDiffSharedFiles: with --apps-root, a changed file that several
// apps read marks each of them as changed, whatever the way it is read: a
// base two overlays share (alpha, beta), a chart's values file (web, a
// Helm source) and a base reached through a directory symlink (linked).
// Only gamma, which read none of them, is left unchecked.
func TestE2EDiffSharedFiles(t *testing.T) {
	overlay := func(app, base string) string {
		return "resources: [" + base + "]\nnamePrefix: " + app + "-\n"
	}
	chart := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: '{{ .Values.image }}'}]}\n"
	base := map[string]string{
		"apps/kustomization.yaml":                 "resources: [alpha.yaml, beta.yaml, gamma.yaml, web.yaml, linked.yaml]\n",
		"apps/alpha.yaml":                         diffApp("alpha", "alpha/overlays/prod"),
		"apps/beta.yaml":                          diffApp("beta", "beta/overlays/prod"),
		"apps/gamma.yaml":                         diffApp("gamma", "gamma/overlays/prod"),
		"apps/web.yaml":                           diffApp("web", "charts/web"),
		"apps/linked.yaml":                        diffApp("linked", "linked/overlays/prod"),
		"common/base/kustomization.yaml":          "resources: [deploy.yaml]\n",
		"common/base/deploy.yaml":                 waiveDeployment("api", "ghcr.io/shop/api:1.0@"+pinnedDigest, ""),
		"alpha/overlays/prod/kustomization.yaml":  overlay("alpha", "../../../common/base"),
		"beta/overlays/prod/kustomization.yaml":   overlay("beta", "../../../common/base"),
		"gamma/base/kustomization.yaml":           "resources: [deploy.yaml]\n",
		"gamma/base/deploy.yaml":                  waiveDeployment("gamma", "ghcr.io/shop/gamma:1.0@"+pinnedDigest, ""),
		"gamma/overlays/prod/kustomization.yaml":  overlay("gamma", "../../base"),
		"charts/web/Chart.yaml":                   "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/values.yaml":                  "image: ghcr.io/shop/web:1.0@" + pinnedDigest + "\n",
		"charts/web/templates/deploy.yaml":        chart,
		"linked/overlays/prod/kustomization.yaml": overlay("linked", "common"),
	}
	head := map[string]string{
		"common/base/deploy.yaml": waiveDeployment("api", "ghcr.io/shop/api:1.1@"+pinnedDigest, ""),
		"charts/web/values.yaml":  "image: ghcr.io/shop/web:1.1@" + pinnedDigest + "\n",
	}
	// linked/overlays/prod/common → ../../../common/base, committed with
	// the base.
	repo := commitRepo(t, map[string]string{"README.md": "apps\n"})
	if err := os.MkdirAll(filepath.Join(repo, "linked/overlays/prod"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../common/base", filepath.Join(repo, "linked/overlays/prod/common")); err != nil {
		t.Fatal(err)
	}
	commitTo(t, repo, base)
	commitTo(t, repo, head)
	tmp := t.TempDir()
	r := gateIn(t, repo, tmp, "diff", "--base", "HEAD~1", "-k", "apps", "--apps-root", ".", "--repo-url", diffRepo, "-o", "json")
	noWorktreeLeft(t, repo, tmp)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0 (images changed, pinned both times)\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var doc struct {
		Counts struct {
			NotRenderedAgain int `json:"notRenderedAgain"`
		}
		Units []struct {
			Input            string
			NotRenderedAgain bool `json:"notRenderedAgain"`
			Objects          []struct {
				Object struct{ Kind, Name string }
				Fields []struct{ Path, Head string }
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	changed := map[string]string{}
	for _, u := range doc.Units {
		f := strings.Fields(u.Input)
		if len(f) < 2 || f[0] != "Application" {
			continue
		}
		app := f[1]
		if u.NotRenderedAgain {
			changed[app] = "unchecked"
			continue
		}
		for _, o := range u.Objects {
			for _, fl := range o.Fields {
				if strings.Contains(fl.Path, "image") && strings.Contains(fl.Head, ":1.1@") {
					changed[app] = o.Object.Kind + " " + o.Object.Name
				}
			}
		}
	}
	want := map[string]string{
		"argocd/alpha": "Deployment alpha-api", "argocd/beta": "Deployment beta-api",
		"argocd/web": "Deployment web", "argocd/linked": "Deployment linked-api",
		"argocd/gamma": "unchecked",
	}
	for app, w := range want {
		if changed[app] != w {
			t.Errorf("%s: %q, want %q", app, changed[app], w)
		}
	}
	if doc.Counts.NotRenderedAgain != 1 {
		t.Errorf("notRenderedAgain %d, want 1 (gamma)\n%s", doc.Counts.NotRenderedAgain, r.Stdout)
	}
}

// commitTo writes files over the repository's tree and commits them.
func commitTo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testutil.WriteFiles(t, dir, files)
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "commit"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestE2EDiffExcludeApp: diff checks --exclude-app as check does: a name
// that matches no app of the head is exit 2 with the closest name, and no
// worktree is left; a name the pull request adds (absent at the base) is
// no error at the base.
func TestE2EDiffExcludeApp(t *testing.T) {
	commits := appsCommits()
	commits[1]["apps/kustomization.yaml"] = "resources: [shop.yaml, blog.yaml, cart.yaml, extra.yaml]\n"
	commits[1]["apps/extra.yaml"] = diffApp("extra", "extra")
	commits[1]["extra/kustomization.yaml"] = "resources: [https://example.invalid/x.yaml]\n"
	repo := commitRepo(t, commits...)
	tmp := t.TempDir()
	args := []string{"diff", "--base", "HEAD~1", "-k", "apps", "--apps-root", ".", "--repo-url", diffRepo}
	for _, cmd := range []string{"check", "diff"} {
		a := append([]string{cmd}, args[1:]...)
		if cmd == "check" {
			a = append([]string{"check"}, args[3:]...)
		}
		r := gateIn(t, repo, tmp, append(a, "--exclude-app", "argocd/blgo")...)
		if r.Code != 2 || !strings.Contains(r.Stderr, `--exclude-app`) || !strings.Contains(r.Stderr, `did you mean "argocd/blog"?`) {
			t.Errorf("%s --exclude-app argocd/blgo: exit %d, want 2 naming argocd/blog\n%s%s", cmd, r.Code, r.Stdout, r.Stderr)
		}
		noWorktreeLeft(t, repo, tmp)
	}
	r := gateIn(t, repo, tmp, append(args, "--exclude-app", "argocd/extra")...)
	if r.Code != 1 || strings.Contains(r.Stdout, "base has no verdict") || !strings.Contains(r.Stdout, `excluded by --exclude-app "argocd/extra"`) {
		t.Errorf("--exclude-app of the app the change adds: exit %d, want 1 (shop's new finding), the base judged\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noWorktreeLeft(t, repo, tmp)
}

// TestE2EDiffUsageError: a usage error at the head (a typo'd in-tree Gate
// in one app's kustomization, found while rendering that app; a -k
// kustomization that names a file outside its directory, found while
// loading) is exit 2 as with check, says it is the head's, names the
// field, and leaves no worktree. The same typo at the base only is the
// base's no verdict, marked a usage error: the change that fixes it is
// judged, every head finding counting as new.
func TestE2EDiffUsageError(t *testing.T) {
	typo := "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec: {bogus: 1}\n"
	good := appsCommits()[0]
	bad := map[string]string{
		"blog/overlays/prod/gate.yaml":          typo,
		"blog/overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: blog-\ntransformers: [gate.yaml]\n",
	}
	fixed := map[string]string{"blog/overlays/prod/kustomization.yaml": good["blog/overlays/prod/kustomization.yaml"]}
	args := []string{"diff", "--base", "HEAD~1", "-k", "apps", "--apps-root", ".", "--repo-url", diffRepo}
	tmp := t.TempDir()

	headBad := commitRepo(t, good, bad)
	if r := gateIn(t, headBad, tmp, "check", "-k", "apps", "--apps-root", ".", "--repo-url", diffRepo); r.Code != 2 {
		t.Errorf("check of the head: exit %d, want 2\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r := gateIn(t, headBad, tmp, args...)
	if r.Code != 2 || !strings.Contains(r.Stderr, "the working tree (the head) has a usage error") || !strings.Contains(r.Stderr, `unknown field "spec.bogus"`) || r.Stdout != "" {
		t.Errorf("head usage error in an app: exit %d, want 2 naming spec.bogus and no report\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noWorktreeLeft(t, headBad, tmp)

	outside := commitRepo(t, good, map[string]string{"shop/overlays/prod/kustomization.yaml": "resources: [../../base]\ntransformers: [../../base/deploy.yaml]\n"})
	r = gateIn(t, outside, tmp, "diff", "--base", "HEAD~1", "-k", "shop/overlays/prod")
	if r.Code != 2 || !strings.Contains(r.Stderr, "working tree: ") || !strings.Contains(r.Stderr, "load restrictor") {
		t.Errorf("head usage error in -k: exit %d, want 2 naming the working tree and the load restrictor\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noWorktreeLeft(t, outside, tmp)

	baseBad := commitRepo(t, good, bad, fixed)
	r = gateIn(t, baseBad, tmp, args...)
	if r.Code != 1 || !strings.Contains(r.Stdout, "base has no verdict, so every finding counts as new: usage error: ") || !strings.Contains(r.Stdout, `unknown field "spec.bogus"`) ||
		!strings.Contains(r.Stdout, "NEW       ERROR [image-digest]") {
		t.Errorf("base usage error, fixed at head: exit %d, want 1 (blog's image-digest new), the base's usage error said\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noWorktreeLeft(t, baseBad, tmp)
}

// TestE2EDiffPrecheck: with --apps-root, an app that reads nothing the
// change touches is decided unchanged before anything is rendered, and is
// rendered at neither revision: stale, whose render fails at both, is
// listed unchanged, not no verdict. What the precheck cannot prove is
// rendered: root (an app of apps: its files name an Application) is, so
// the change to its child's source shows; and stale with a kustomization
// field outside what the precheck reads (replacements:) is rendered at the
// head, whose render fails: no verdict.
func TestE2EDiffPrecheck(t *testing.T) {
	commits := appsCommits()
	base, head := commits[0], commits[1]
	base["apps/kustomization.yaml"] = "resources: [shop.yaml, blog.yaml, cart.yaml, stale.yaml, root.yaml]\n"
	base["apps/stale.yaml"] = diffApp("stale", "stale")
	base["stale/kustomization.yaml"] = "resources: [bad.yaml]\n"
	base["stale/bad.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stale, namespace: shop\n"
	base["apps/root.yaml"] = diffApp("root", "root")
	base["root/kustomization.yaml"] = "resources: [child.yaml]\n"
	base["root/child.yaml"] = diffApp("child", "child")
	base["child/kustomization.yaml"] = "resources: [cm.yaml]\n"
	base["child/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: child, namespace: shop}\ndata: {level: one}\n"
	head["child/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: child, namespace: shop}\ndata: {level: two}\n"
	repo := commitRepo(t, base, head)
	tmp := t.TempDir()
	args := []string{"diff", "--base", "HEAD~1", "-k", "apps", "--apps-root", ".", "--repo-url", diffRepo}
	r := gateIn(t, repo, tmp, args...)
	if r.Code != 1 || strings.Contains(r.Stdout, "NO VERDICT") || !strings.Contains(r.Stdout, `data.level: "one" → "two"`) ||
		!strings.Contains(r.Stdout, "NEW       ERROR [image-digest]") || !strings.Contains(r.Stdout, "2 app(s) unchanged: not rendered again or checked") {
		t.Errorf("exit %d, want 1: shop's new finding, child's change through root, stale and blog unchanged and not rendered\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noWorktreeLeft(t, repo, tmp)

	base["stale/kustomization.yaml"] = "resources: [bad.yaml]\nreplacements: []\n"
	repo = commitRepo(t, base, head)
	r = gateIn(t, repo, tmp, args...)
	if r.Code != 3 || !strings.Contains(r.Stdout, "NO VERDICT at head: Application argocd/stale") {
		t.Errorf("stale with replacements: exit %d, want 3 (rendered at the head, which fails)\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noWorktreeLeft(t, repo, tmp)
}
