package plugin_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/imagelock"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestE2EImageLock: pin --write-lock records what the registry answered;
// check --lock holds a render to it with the registry gone, and catches a
// digest changed by hand, a tag that moved, an image added without pinning
// and an entry the render dropped.
func TestE2EImageLock(t *testing.T) {
	reg := testutil.StartRegistry(t)
	webDigest := reg.PushImage(t, "shop/web:1.4.2")
	apiIndex := reg.PushIndex(t, "shop/api:2.0.0")
	web, api := reg.Host+"/shop/web:1.4.2", reg.Host+"/shop/api:2.0.0"
	dir := t.TempDir()
	lockFile := filepath.Join(dir, "gate.lock")

	r := gate(t, workloads(3, web, api), "pin", "-f", "-", "--insecure-registry", reg.Host, "--write-lock", lockFile)
	if r.Code != 0 {
		t.Fatalf("pin --write-lock: exit %d\n%s", r.Code, r.Stderr)
	}
	data, err := os.ReadFile(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := imagelock.Parse(data)
	if err != nil {
		t.Fatalf("the written lock does not parse: %v\n%s", err, data)
	}
	if len(lock.Spec.Images) != 2 || lock.Spec.Images[0].Image != api || lock.Spec.Images[0].Digest != apiIndex ||
		lock.Spec.Images[1].Image != web || lock.Spec.Images[1].Digest != webDigest || lock.Spec.Images[1].Resolved == "" {
		t.Fatalf("lock (sorted by image, one entry per reference) =\n%s", data)
	}
	if !strings.Contains(string(data), `config.kubernetes.io/local-config: "true"`) {
		t.Errorf("the lock is not local config: kustomize would emit it\n%s", data)
	}
	pinned := r.Stdout

	// Offline: a registry that answers nothing, and none is asked.
	reg.ResetCount()
	reg.Wrap = func(w http.ResponseWriter, _ *http.Request, _ http.Handler) { w.WriteHeader(500) }
	if c := gate(t, pinned, "check", "-f", "-", "--lock", lockFile); c.Code != 0 {
		t.Fatalf("check --lock of the pinned render: exit %d\n%s%s", c.Code, c.Stdout, c.Stderr)
	}
	if n := reg.ManifestRequests(); n != 0 {
		t.Errorf("check --lock asked the registry %d times", n)
	}

	other := "sha256:" + strings.Repeat("e", 64)
	cases := []struct {
		name   string
		render string
		code   int
		says   string
	}{
		{"a digest changed by hand", strings.ReplaceAll(pinned, webDigest, other), 1, "the lock pins tag 1.4.2 to " + webDigest + ", the render to " + other},
		{"an image added without the lock", pinned + workloads(1, reg.Host+"/shop/new:1@"+other), 1, "it holds no entry for " + reg.Host + "/shop/new"},
		{"a tag left unpinned", workloads(1, web, api+"@"+apiIndex), 1, "has no digest; the lock pins it to " + webDigest},
		{"an entry the render no longer uses", workloads(1, web+"@"+webDigest), 0, "[image-lock-unused]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := gate(t, c.render, "check", "-f", "-", "--lock", lockFile)
			if got.Code != c.code || !strings.Contains(got.Stdout, c.says) {
				t.Fatalf("exit %d, want %d with %q\n%s%s", got.Code, c.code, c.says, got.Stdout, got.Stderr)
			}
			if c.code == 1 && !strings.Contains(got.Stdout, "[image-lock]") {
				t.Errorf("not reported as image-lock:\n%s", got.Stdout)
			}
		})
	}

	// The tag moves: pinning again gives another digest, which the old
	// lock refuses; the new lock changes that entry's lines only.
	reg.Wrap = nil
	moved := reg.PushImage(t, "shop/web:1.4.2")
	again := gate(t, workloads(3, web, api), "pin", "-f", "-", "--insecure-registry", reg.Host)
	if again.Code != 0 || !strings.Contains(again.Stdout, web+"@"+moved) {
		t.Fatalf("re-pin after the tag moved: exit %d\n%s", again.Code, again.Stderr)
	}
	if c := gate(t, again.Stdout, "check", "-f", "-", "--lock", lockFile); c.Code != 1 || !strings.Contains(c.Stdout, "the lock pins tag 1.4.2 to "+webDigest+", the render to "+moved) {
		t.Errorf("a moved tag passed the old lock: exit %d\n%s", c.Code, c.Stdout)
	}
	if r := gate(t, workloads(3, web, api), "pin", "-f", "-", "--insecure-registry", reg.Host, "--write-lock", lockFile); r.Code != 0 {
		t.Fatalf("re-pin --write-lock: exit %d\n%s", r.Code, r.Stderr)
	}
	after, _ := os.ReadFile(lockFile)
	if changed := diffLines(string(data), string(after)); len(changed) > 2 || !strings.Contains(string(after), moved) {
		t.Errorf("re-pin changed %d lines, want the moved entry's digest and time:\n%s", len(changed), strings.Join(changed, "\n"))
	}

	// Usage errors: a lock that is not there, one that does not parse.
	if c := gate(t, pinned, "check", "-f", "-", "--lock", filepath.Join(dir, "missing.lock")); c.Code != 2 {
		t.Errorf("missing lock: exit %d, want 2\n%s", c.Code, c.Stderr)
	}
	bad := filepath.Join(dir, "bad.lock")
	_ = os.WriteFile(bad, []byte(strings.Replace(string(data), "digest:", "digset:", 1)), 0o644)
	if c := gate(t, pinned, "check", "-f", "-", "--lock", bad); c.Code != 2 || !strings.Contains(c.Stdout+c.Stderr, "digset") {
		t.Errorf("malformed lock: exit %d, want 2 naming the field\n%s%s", c.Code, c.Stdout, c.Stderr)
	}
	// pin never replaces a file that is not a lock.
	notLock := filepath.Join(dir, "kustomization.yaml")
	_ = os.WriteFile(notLock, []byte("resources: [a.yaml]\n"), 0o644)
	if c := gate(t, workloads(1, web), "pin", "-f", "-", "--insecure-registry", reg.Host, "--write-lock", notLock); c.Code != 2 {
		t.Errorf("--write-lock over a kustomization: exit %d, want 2\n%s", c.Code, c.Stderr)
	}
	if b, _ := os.ReadFile(notLock); string(b) != "resources: [a.yaml]\n" {
		t.Errorf("--write-lock replaced a file that is not a lock:\n%s", b)
	}
}

// diffLines returns the lines of b not in a.
func diffLines(a, b string) []string {
	have := map[string]bool{}
	for _, l := range strings.Split(a, "\n") {
		have[l] = true
	}
	var out []string
	for _, l := range strings.Split(b, "\n") {
		if !have[l] {
			out = append(out, l)
		}
	}
	return out
}

// TestE2EImageLockInTheRender: an ImageLock kept in the kustomization as
// local config is checked with no flag, by check -k in process and by the
// KRM function under kustomize build, with no network at all.
func TestE2EImageLockInTheRender(t *testing.T) {
	digest := "sha256:" + strings.Repeat("4", 64)
	other := "sha256:" + strings.Repeat("5", 64)
	// A host nothing listens on, and proxies that refuse: any registry
	// call fails the run.
	host := "127.0.0.1:1"
	lock := "apiVersion: kubectl-gate.dev/v1alpha1\nkind: ImageLock\nmetadata:\n  name: images\n  annotations: {config.kubernetes.io/local-config: \"true\"}\nspec:\n  images:\n  - image: " + host + "/shop/web:1.4.2\n    digest: " + digest + "\n    resolved: \"2026-12-03T11:00:00Z\"\n"
	tree := func(image string) string {
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, map[string]string{
			"kustomization.yaml": "resources: [deploy.yaml, gate.lock]\nvalidators: [gate.yaml]\n",
			"deploy.yaml":        strings.TrimPrefix(workloads(1, image), "---\n"),
			"gate.lock":          lock,
			"gate.yaml": "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata:\n  name: g\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " +
				testutil.Bin(t, "gate-fn") + "\nspec: {}\n",
		})
		return dir
	}
	good, drift := tree(host+"/shop/web:1.4.2@"+digest), tree(host+"/shop/web:1.4.2@"+other)
	offline := []string{"HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1", "NO_PROXY="}
	if r := testutil.Run(t, good, "", offline, testutil.Bin(t, "kubectl-gate"), "check", "-k", "."); r.Code != 0 {
		t.Fatalf("check -k, render matches its lock: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r := testutil.Run(t, drift, "", offline, testutil.Bin(t, "kubectl-gate"), "check", "-k", ".")
	if r.Code != 1 || !strings.Contains(r.Stdout, "[image-lock]") || !strings.Contains(r.Stdout, "the lock pins tag 1.4.2 to "+digest) {
		t.Fatalf("check -k, render drifted from its lock: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	k := testutil.Tool(t, "KUSTOMIZE", "kustomize")
	build := func(dir string) testutil.Result {
		return testutil.Run(t, dir, "", offline, k, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	}
	if b := build(good); b.Code != 0 || strings.Contains(b.Stdout, "ImageLock") {
		t.Fatalf("kustomize build, render matches its lock: exit %d (the lock must not be emitted)\n%s%s", b.Code, b.Stdout, b.Stderr)
	}
	b := build(drift)
	if b.Code == 0 || !strings.Contains(b.Stderr, "[image-lock]") || !strings.Contains(b.Stderr, "the lock pins tag 1.4.2 to "+digest) {
		t.Fatalf("kustomize build, render drifted from its lock: exit %d\n%s", b.Code, b.Stderr)
	}
}
