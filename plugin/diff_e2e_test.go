package plugin_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// gitRepo makes a repository with one commit per map of files (each map
// is written over the tree before its commit) and returns its directory.
func commitRepo(t *testing.T, commits ...map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	for i, files := range commits {
		testutil.WriteFiles(t, dir, files)
		run("add", "-A")
		run("commit", "-q", "-m", fmt.Sprintf("commit %d", i+1))
	}
	return dir
}

// gateIn runs the built binary in dir with TMPDIR set to tmp, so the test
// sees every temporary worktree the run makes.
func gateIn(t *testing.T, dir, tmp string, args ...string) testutil.Result {
	t.Helper()
	return testutil.Run(t, dir, "", []string{"TMPDIR=" + tmp}, testutil.Bin(t, "kubectl-gate"), args...)
}

// noWorktreeLeft fails when the repository lists a worktree besides its
// own, or a kubectl-gate-diff-* directory is left in tmp.
func noWorktreeLeft(t *testing.T, repo, tmp string) {
	t.Helper()
	cmd := exec.Command("git", "worktree", "list", "--porcelain")
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "worktree "); n != 1 {
		t.Errorf("%d worktrees left:\n%s", n, out)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "kubectl-gate-diff-*"))
	if len(left) > 0 {
		t.Errorf("temporary worktrees left: %v", left)
	}
}

const (
	baseSecret = "hunter2-base-value"
	headSecret = "s3cret-HEAD-value"
	baseToken  = "tok-base-0001"
	headToken  = "tok-head-0002-longer"
)

func shopCommits(extra string) []map[string]string {
	deploy := func(image string) string { return waiveDeployment("web", image, "") }
	secret := func(pw, tok string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: shop}\nstringData: {password: " + pw + "}\ndata: {token: " +
			base64.StdEncoding.EncodeToString([]byte(tok)) + "}\n"
	}
	cm := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {banner: '" + v + "'}\n"
	}
	return []map[string]string{
		{
			"app/kustomization.yaml": "resources: [deploy.yaml, secret.yaml, cm.yaml]\n",
			"app/deploy.yaml":        deploy("ghcr.io/shop/web:1.4@" + pinnedDigest),
			"app/secret.yaml":        secret(baseSecret, baseToken),
			"app/cm.yaml":            cm("hello"),
		},
		{
			"app/deploy.yaml": deploy("ghcr.io/shop/web:1.5"),
			"app/secret.yaml": secret(headSecret, headToken),
			"app/cm.yaml":     cm(extra),
		},
	}
}

// TestE2EDiff: on a two-commit repository, diff --base shows the new
// finding, the changed image and that the Secret changed, with no value
// of it in any format, and leaves no worktree behind.
func TestE2EDiff(t *testing.T) {
	repo := commitRepo(t, shopCommits("welcome")...)
	tmp := t.TempDir()
	outputs := map[string]string{}
	for _, format := range []string{"text", "json", "markdown", "html"} {
		r := gateIn(t, repo, tmp, "diff", "--base", "HEAD~1", "-k", "app", "-o", format)
		if r.Code != 1 {
			t.Fatalf("-o %s: exit %d, want 1 (a new error finding)\n%s%s", format, r.Code, r.Stdout, r.Stderr)
		}
		outputs[format] = r.Stdout
		noWorktreeLeft(t, repo, tmp)
	}
	text := outputs["text"]
	for _, s := range []string{
		"findings: 1 new (1 error(s)), 0 fixed, 0 unchanged",
		`spec.template.spec.containers[name=web].image: "ghcr.io/shop/web:1.4@` + pinnedDigest + `" → "ghcr.io/shop/web:1.5"`,
		"stringData.password: changed (18 → 17 bytes)",
		"data.token: changed (13 → 20 bytes)",
		"NEW       ERROR [image-digest] Deployment/web (ns shop)",
		"renderers: helm SDK v", "kustomize api v", "kubernetesSchema 1.",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
	for format, out := range outputs {
		for _, v := range []string{baseSecret, headSecret, baseToken, headToken, base64.StdEncoding.EncodeToString([]byte(baseToken)), base64.StdEncoding.EncodeToString([]byte(headToken))} {
			if strings.Contains(out, v) {
				t.Errorf("-o %s prints a Secret value %q", format, v)
			}
		}
	}
	var doc struct {
		Counts struct {
			NewErrors int
			Changed   int `json:"objectsChanged"`
		}
		Units []struct {
			Input string
			New   []struct{ Rule string }
		}
	}
	if err := json.Unmarshal([]byte(outputs["json"]), &doc); err != nil {
		t.Fatalf("json: %v", err)
	}
	if doc.Counts.NewErrors != 1 || doc.Counts.Changed != 3 || len(doc.Units) != 1 || doc.Units[0].Input != "-k app" || doc.Units[0].New[0].Rule != "image-digest" {
		t.Errorf("json: %s", outputs["json"])
	}
	if !strings.HasPrefix(outputs["markdown"], "### kubectl gate diff: ❌ 1 new error finding(s)") || !strings.Contains(outputs["markdown"], "<details>") {
		t.Errorf("markdown:\n%s", outputs["markdown"])
	}
}

// TestE2EDiffMarkdownLimit: a comment never exceeds GitHub's limit; without
// --split it says how much was left out, with it every part fits.
func TestE2EDiffMarkdownLimit(t *testing.T) {
	commits := []map[string]string{{"app/kustomization.yaml": "resources: [cm.yaml]\n"}, {}}
	var b0, b1 strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b0, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: shop}\ndata: {v: '%s'}\n", i, strings.Repeat("a", 150))
		fmt.Fprintf(&b1, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: shop}\ndata: {v: '%s'}\n", i, strings.Repeat("b", 150))
	}
	commits[0]["app/cm.yaml"], commits[1]["app/cm.yaml"] = b0.String(), b1.String()
	// Several inputs, so there are several sections to split.
	for i := range 4 {
		commits[0][fmt.Sprintf("app%d/kustomization.yaml", i)] = "resources: [../app]\nnamePrefix: p" + fmt.Sprint(i) + "-\n"
	}
	repo := commitRepo(t, commits...)
	tmp := t.TempDir()
	args := []string{"diff", "--base", "HEAD~1", "-k", "app0", "-k", "app1", "-k", "app2", "-k", "app3", "-o", "markdown"}
	cut := gateIn(t, repo, tmp, args...)
	if cut.Code != 0 || len([]rune(cut.Stdout)) > 65536 || !strings.Contains(cut.Stdout, "… and ") {
		t.Fatalf("exit %d, %d characters\n%s", cut.Code, len([]rune(cut.Stdout)), cut.Stderr)
	}
	dir := t.TempDir()
	split := gateIn(t, repo, tmp, append(args, "--split", "--split-dir", dir)...)
	parts, _ := filepath.Glob(filepath.Join(dir, "kubectl-gate-diff-*.md"))
	if split.Code != 0 || len(parts) < 2 {
		t.Fatalf("--split: exit %d, parts %v\n%s", split.Code, parts, split.Stderr)
	}
	for _, p := range parts {
		data, _ := os.ReadFile(p)
		if len([]rune(string(data))) > 65536 {
			t.Errorf("%s: %d characters", p, len([]rune(string(data))))
		}
	}
	noWorktreeLeft(t, repo, tmp)
}

// TestE2EDiffVerdicts: exit 3 when the head has no verdict; a base with no
// verdict makes every head finding new and says why; a bad revision is a
// usage error. No path leaves a worktree.
func TestE2EDiffVerdicts(t *testing.T) {
	tmp := t.TempDir()
	broken := "resources: [missing.yaml]\n"
	good := shopCommits("x")[1]
	good["app/kustomization.yaml"] = "resources: [deploy.yaml]\n"
	headBroken := commitRepo(t, good, map[string]string{"app/kustomization.yaml": broken})
	if r := gateIn(t, headBroken, tmp, "diff", "--base", "HEAD~1", "-k", "app"); r.Code != 3 || !strings.Contains(r.Stdout, "NO VERDICT at head") {
		t.Errorf("head broken: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noWorktreeLeft(t, headBroken, tmp)
	baseBroken := commitRepo(t, map[string]string{"app/kustomization.yaml": broken}, good)
	r := gateIn(t, baseBroken, tmp, "diff", "--base", "HEAD~1", "-k", "app")
	if r.Code != 1 || !strings.Contains(r.Stdout, "base has no verdict, so every finding counts as new") || !strings.Contains(r.Stdout, "NEW       ERROR [image-digest]") {
		t.Errorf("base broken: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	noWorktreeLeft(t, baseBroken, tmp)
	if r := gateIn(t, baseBroken, tmp, "diff", "--base", "no-such-ref", "-k", "app"); r.Code != 2 {
		t.Errorf("bad ref: exit %d\n%s", r.Code, r.Stderr)
	}
	noWorktreeLeft(t, baseBroken, tmp)
}

// TestE2EDiffStopped: a render that never finishes is stopped by SIGINT
// and by --timeout, and neither leaves the worktree behind.
func TestE2EDiffStopped(t *testing.T) {
	hang := map[string]string{"app/kustomization.yaml": "resources:\n- pod.yaml\n- http://" + hangingServer(t) + "/remote.yaml\n",
		"app/pod.yaml": waiveDeployment("web", "nginx@"+pinnedDigest, "")}
	repo := commitRepo(t, hang, map[string]string{"app/pod.yaml": waiveDeployment("web", "nginx:latest", "")})
	tmp := t.TempDir()
	if r := gateIn(t, repo, tmp, "diff", "--base", "HEAD~1", "-k", "app", "--timeout", "2s"); r.Code != 3 || !strings.Contains(r.Stderr, "--timeout 2s exceeded") {
		t.Errorf("--timeout: exit %d\n%s", r.Code, r.Stderr)
	}
	noWorktreeLeft(t, repo, tmp)

	cmd := exec.Command(testutil.Bin(t, "kubectl-gate"), "diff", "--base", "HEAD~1", "-k", "app")
	cmd.Dir, cmd.Env = repo, append(os.Environ(), "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if left, _ := filepath.Glob(filepath.Join(tmp, "kubectl-gate-diff-*", "app")); len(left) > 0 {
			break // the worktree is checked out: the base render is running
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no worktree appeared\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(stderr.String(), "interrupted by SIGINT") {
		t.Errorf("SIGINT: exit %d (%v)\n%s", code, err, stderr.String())
	}
	noWorktreeLeft(t, repo, tmp)
}

// TestE2EDiffHTMLInBrowser opens the HTML report in a real headless
// browser: it renders the findings and the object diff, and the page makes
// no request, even though values from the pull request name a loopback
// sentinel. A control page proves the sentinel would see a request.
func TestE2EDiffHTMLInBrowser(t *testing.T) {
	browser := testutil.Tool(t, "CHROMIUM", "chromium-headless-shell")
	var hits atomic.Int64
	sentinel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/gif")
	}))
	defer sentinel.Close()
	hostile := `<img src="` + sentinel.URL + `/img"><link rel="stylesheet" href="` + sentinel.URL + `/css"><script src="` + sentinel.URL + `/js"></script>`
	repo := commitRepo(t, shopCommits(strings.ReplaceAll(hostile, "'", "''"))...)
	tmp := t.TempDir()
	r := gateIn(t, repo, tmp, "diff", "--base", "HEAD~1", "-k", "app", "-o", "html")
	if r.Code != 1 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	mustWrite(t, page, r.Stdout)
	dump := func(path string) string { return dumpDOM(t, browser, path) }
	dom := dump(page)
	for _, s := range []string{"NEW ERROR [image-digest] Deployment/web (ns shop)", "stringData.password: changed (18 → 17 bytes)", "apps/Deployment shop/web", "&lt;img src="} {
		if !strings.Contains(dom, s) {
			t.Errorf("the rendered page lacks %q:\n%s", s, dom)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the report made %d request(s) to the loopback sentinel", n)
	}
	control := filepath.Join(t.TempDir(), "control.html")
	mustWrite(t, control, `<!DOCTYPE html><html><body><img src="`+sentinel.URL+`/control"></body></html>`)
	dump(control)
	if hits.Load() == 0 {
		t.Error("the control page made no request: the sentinel cannot tell")
	}
}

// dumpDOM loads a local page in the headless browser and returns the DOM
// it ends with. The flags are those a closed, container-like machine needs:
// no sandbox (root), no /dev/shm (it may be tiny or absent), no crash
// reporter, no background fetches, a fresh profile. A browser that dies of
// a signal before it printed anything is started again, at most twice: such
// a crash is the machine's, not the page's (the page still has to render
// for the test to pass), and its output is shown if all three die.
func dumpDOM(t *testing.T, browser, path string) string {
	t.Helper()
	var crashes []string
	for attempt := 0; attempt < 3; attempt++ {
		cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu",
			"--disable-dev-shm-usage", "--disable-crash-reporter", "--disable-breakpad",
			"--no-first-run", "--disable-background-networking", "--disable-component-update",
			"--disable-sync", "--disable-quic", "--user-data-dir="+t.TempDir(),
			"--virtual-time-budget=3000", "--dump-dom", "file://"+path)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil {
			return string(out)
		}
		var exit *exec.ExitError
		crashed := errors.As(err, &exit) && (!exit.Exited() || exit.ExitCode() > 128) && len(out) == 0
		tail := stderr.String()
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		crashes = append(crashes, fmt.Sprintf("attempt %d: %v\n%s", attempt+1, err, tail))
		if !crashed {
			break
		}
	}
	t.Fatalf("%s could not load %s:\n%s", browser, path, strings.Join(crashes, "\n"))
	return ""
}

// hangingServer accepts connections on loopback and never answers: a
// remote resource on it makes a render that never finishes.
func hangingServer(t *testing.T) string {
	t.Helper()
	stopped := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stopped }))
	t.Cleanup(func() { close(stopped); srv.Close() })
	return strings.TrimPrefix(srv.URL, "http://")
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
