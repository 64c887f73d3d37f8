package plugin_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestE2EPinSeveralInputs: pin of several inputs checks and pins each
// render as soon as it is made and keeps it as the bytes it prints
// (pipeline.Unit.KeepYAML): the stream is each input's pinned render, in
// the order given, exactly as pinning each alone prints it; and when one
// input has no verdict, nothing is printed, whatever was pinned before.
func TestE2EPinSeveralInputs(t *testing.T) {
	reg := testutil.StartRegistry(t)
	web := reg.Host + "/shop/web:1.4.2"
	digest := reg.PushImage(t, "shop/web:1.4.2")
	dir := t.TempDir()
	for _, k := range []string{"a", "b", "c"} {
		write(t, filepath.Join(dir, k, "kustomization.yaml"), "namespace: "+k+"\nresources: [web.yaml]\n")
		write(t, filepath.Join(dir, k, "web.yaml"), workloads(3, web))
	}
	write(t, filepath.Join(dir, "missing", "kustomization.yaml"), "resources: [web.yaml]\n")
	write(t, filepath.Join(dir, "missing", "web.yaml"), workloads(1, reg.Host+"/shop/none:1"))
	write(t, filepath.Join(dir, "files", "web.yaml"), strings.ReplaceAll(workloads(2, web), "namespace: shop", "namespace: f"))
	pin := func(args ...string) testutil.Result {
		return gate(t, "", append([]string{"pin", "--insecure-registry", reg.Host, "--timeout", "20s"}, args...)...)
	}
	inputs := [][]string{{"-k", filepath.Join(dir, "a")}, {"-k", filepath.Join(dir, "b")}, {"-k", filepath.Join(dir, "c")}, {"-f", filepath.Join(dir, "files")}}
	var all, alone []string
	for _, in := range inputs {
		r := pin(in...)
		if r.Code != 0 {
			t.Fatalf("pin %s: exit %d\n%s", in, r.Code, r.Stderr)
		}
		all = append(all, in...)
		alone = append(alone, r.Stdout)
	}
	r := pin(all...)
	if r.Code != 0 {
		t.Fatalf("pin %s: exit %d\n%s", all, r.Code, r.Stderr)
	}
	if want := strings.Join(alone, "---\n"); r.Stdout != want {
		t.Errorf("pin of several inputs prints other than each input pinned alone, in order:\n%s\nwant:\n%s", r.Stdout, want)
	}
	if got := strings.Count(r.Stdout, web+"@"+digest); got != 3*3+2 {
		t.Errorf("%d images pinned to %s, want 11:\n%s", got, digest, r.Stdout)
	}
	if !says(r.Stderr, "PASS: 11 resource(s)") {
		t.Errorf("report:\n%s", r.Stderr)
	}
	// The missing image has no verdict: nothing reaches stdout, though
	// the renders before and after it were pinned and kept.
	bad := []string{"-k", filepath.Join(dir, "a"), "-k", filepath.Join(dir, "missing"), "-k", filepath.Join(dir, "b")}
	if r := pin(bad...); r.Code != 3 || r.Stdout != "" || !strings.Contains(r.Stderr, "image-resolve") {
		t.Errorf("pin %s: exit %d, want 3 and nothing printed\nstdout:\n%s\nstderr:\n%s", bad, r.Code, r.Stdout, r.Stderr)
	}
}
