package plugin_test

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// workloads renders n Deployments that use images, each image reference
// repeated across them.
func workloads(n int, images ...string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app-%d, namespace: shop}\nspec:\n  selector: {matchLabels: {app: app-%d}}\n  template:\n    metadata: {labels: {app: app-%d}}\n    spec:\n      containers:\n", i, i, i)
		for j, img := range images {
			fmt.Fprintf(&b, "      - {name: c%d, image: %q}\n", j, img)
		}
	}
	return b.String()
}

func TestE2EPinMatchesTheRegistry(t *testing.T) {
	reg := testutil.StartRegistry(t)
	single := reg.PushImage(t, "shop/web:1.4.2")
	index := reg.PushIndex(t, "shop/api:2.0.0")
	reg.ResetCount()
	web, api := reg.Host+"/shop/web:1.4.2", reg.Host+"/shop/api:2.0.0"
	r := gate(t, workloads(20, web, api, web), "pin", "-f", "-", "--insecure-registry", reg.Host)
	if r.Code != 0 {
		t.Fatalf("pin: exit %d\n%s", r.Code, r.Stderr)
	}
	if got := strings.Count(r.Stdout, web+"@"+single); got != 40 {
		t.Errorf("%d images pinned to the registry's digest %s, want 40:\n%s", got, single, r.Stdout)
	}
	if got := strings.Count(r.Stdout, api+"@"+index); got != 20 {
		t.Errorf("%d images pinned to the index digest, want 20", got)
	}
	if n := reg.ManifestRequests(); n != 2 {
		t.Errorf("%d manifest requests for 2 unique references used 60 times, want 2", n)
	}
	if strings.Count(r.Stdout, "kubectl-gate.dev/pinned:") != 20 {
		t.Errorf("pinned workloads are not stamped:\n%s", r.Stdout)
	}
	// What pin printed passes check, and --require-pinned-by sees the stamp.
	if c := gate(t, r.Stdout, "check", "-f", "-", "--require-pinned-by"); c.Code != 0 {
		t.Errorf("check of the pinned render: exit %d\n%s", c.Code, c.Stdout)
	}
	if c := gate(t, workloads(1, web+"@"+single), "check", "-f", "-", "--require-pinned-by"); c.Code != 1 || !strings.Contains(c.Stdout, "[image-pinned-by]") {
		t.Errorf("an unstamped render passed --require-pinned-by: exit %d\n%s", c.Code, c.Stdout)
	}
}

func TestE2EPinFailsClosed(t *testing.T) {
	refused := func() string { // a port nothing listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}()
	cases := map[string]func(w http.ResponseWriter, r *http.Request, next http.Handler){
		"500": func(w http.ResponseWriter, _ *http.Request, _ http.Handler) { w.WriteHeader(500) },
		"429 forever": func(w http.ResponseWriter, _ *http.Request, _ http.Handler) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
		},
		"401":           func(w http.ResponseWriter, _ *http.Request, _ http.Handler) { w.WriteHeader(401) },
		"hangs":         func(_ http.ResponseWriter, r *http.Request, _ http.Handler) { <-r.Context().Done() },
		"not found":     nil,
		"conn. refused": nil,
	}
	for name, wrap := range cases {
		t.Run(name, func(t *testing.T) {
			reg := testutil.StartRegistry(t)
			host := reg.Host
			if name == "conn. refused" {
				host = refused
			}
			reg.Wrap = wrap
			start := time.Now()
			r := gate(t, workloads(3, host+"/shop/web:1.0"), "pin", "-f", "-", "--insecure-registry", host, "--timeout", "3s", "-o", "json")
			took := time.Since(start)
			if r.Code != 3 || !strings.Contains(r.Stderr, `"rule": "image-resolve"`) || !strings.Contains(r.Stderr, `"verdict": "no-verdict"`) {
				t.Fatalf("exit %d, want 3 with image-resolve findings\nstderr:\n%s", r.Code, r.Stderr)
			}
			if r.Stdout != "" {
				t.Errorf("a failed pin printed a partial render:\n%s", r.Stdout)
			}
			if took > 10*time.Second {
				t.Errorf("took %s; the deadline is 3s", took)
			}
		})
	}
}

func TestE2EWriteKustomization(t *testing.T) {
	reg := testutil.StartRegistry(t)
	digest := reg.PushImage(t, "shop/web:1.5.0")
	dir := t.TempDir()
	kust := "# the shop, staging\nresources:\n  - web.yaml # the web tier\nimages:\n  - name: web\n    newName: " + reg.Host + "/shop/web\n    newTag: \"1.5.0\"\n"
	write(t, filepath.Join(dir, "kustomization.yaml"), kust)
	write(t, filepath.Join(dir, "web.yaml"), workloads(1, "web:dev"))
	// A failing registry leaves the file byte-identical.
	reg.Wrap = func(w http.ResponseWriter, _ *http.Request, _ http.Handler) { w.WriteHeader(503) }
	if r := gate(t, "", "pin", "--write-kustomization", dir, "--insecure-registry", reg.Host, "--timeout", "2s"); r.Code != 3 {
		t.Fatalf("pin against a failing registry: exit %d\n%s", r.Code, r.Stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml")); string(got) != kust {
		t.Fatalf("the kustomization changed on failure:\n%s", got)
	}
	reg.Wrap = nil
	// Without -k the kustomization is all that is pinned: the lock holds
	// what it pinned (it used to come out empty).
	lock := filepath.Join(t.TempDir(), "images.lock.yaml")
	if r := gate(t, "", "pin", "--write-kustomization", dir, "--insecure-registry", reg.Host, "--write-lock", lock); r.Code != 0 {
		t.Fatalf("pin --write-kustomization: exit %d\n%s", r.Code, r.Stderr)
	}
	if l, err := os.ReadFile(lock); err != nil || !strings.Contains(string(l), reg.Host+"/shop/web:1.5.0") || !strings.Contains(string(l), digest) {
		t.Fatalf("the lock written with --write-kustomization alone (%v):\n%s", err, l)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	want := strings.Replace(kust, "newTag: \"1.5.0\"\n", "newTag: \"1.5.0\"\n    digest: "+digest+"\n", 1)
	if string(got) != want {
		t.Fatalf("kustomization after pin:\n%s\nwant:\n%s", got, want)
	}
	// kustomize renders the written digest, and the gate passes the source.
	if r := gate(t, "", "check", "-k", dir); r.Code != 0 || !strings.Contains(r.Stdout, "PASS") {
		t.Errorf("check of the pinned source: exit %d\n%s", r.Code, r.Stdout)
	}
}

func TestE2ECredentialsNeverPrinted(t *testing.T) {
	const password = "s3cr3t-Pa55word-xyz"
	reg := testutil.StartRegistry(t)
	reg.Wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ci" || p != "the-right-one" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials %s"}]}`, r.Header.Get("Authorization"))
			return
		}
		next.ServeHTTP(w, r)
	}
	cfg := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte("ci:" + password))
	write(t, filepath.Join(cfg, "config.json"), fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, reg.Host, auth))
	for _, out := range []string{"text", "json"} {
		r := testutil.Run(t, testutil.Root(t), workloads(1, reg.Host+"/shop/web:1"), []string{"DOCKER_CONFIG=" + cfg},
			testutil.Bin(t, "kubectl-gate"), "pin", "-f", "-", "--insecure-registry", reg.Host, "-o", out)
		if r.Code != 3 {
			t.Fatalf("exit %d, want 3:\n%s", r.Code, r.Stderr)
		}
		all := r.Stdout + r.Stderr
		if strings.Contains(all, password) || strings.Contains(all, auth) {
			t.Fatalf("-o %s: the password leaked:\n%s", out, all)
		}
	}
}

// TestE2ESelftestWithTheRegistry proves the registry rules red: with
// verify, a digest the registry does not hold must stop the gate; with
// --require-pinned-by, a workload without the stamp must.
func TestE2ESelftestWithTheRegistry(t *testing.T) {
	reg := testutil.StartRegistry(t)
	reg.PushImage(t, "shop/web:1.0")
	pin := gate(t, workloads(2, reg.Host+"/shop/web:1.0"), "pin", "-f", "-", "--insecure-registry", reg.Host)
	if pin.Code != 0 {
		t.Fatalf("pin: exit %d\n%s", pin.Code, pin.Stderr)
	}
	r := gate(t, pin.Stdout, "selftest", "-f", "-", "--digest", "verify", "--insecure-registry", reg.Host, "--require-pinned-by", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("selftest: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"image-resolve", "image-pinned-by"} {
		i := strings.Index(r.Stdout, `"rule": "`+want+`"`)
		if i < 0 || !strings.Contains(r.Stdout[i:min(i+300, len(r.Stdout))], `"got": "fail"`) {
			t.Errorf("selftest did not prove %s red:\n%s", want, r.Stdout)
		}
	}
}
