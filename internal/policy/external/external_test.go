package external

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

func read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func abs(t testing.TB, path string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseKyvernoReport(t *testing.T) {
	fs, seen, err := ParseKyvernoReport(read(t, "kyverno-report-fail.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Result != Fail || fs[0].Policy != "require-pinned" || fs[0].Rule != "pinned" ||
		fs[0].Resource == nil || fs[0].Resource.Name != "web" || !strings.Contains(fs[0].Message, "pinned by digest") {
		t.Fatalf("findings = %+v", fs)
	}
	if !seen["require-pinned"] {
		t.Errorf("seen = %v", seen)
	}
	fs, _, err = ParseKyvernoReport(read(t, "kyverno-report-skipped.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 || fs[0].Result != Error || fs[0].Policy != "needs-vars" || fs[1].Result != Warning {
		t.Fatalf("findings = %+v", fs)
	}
	// kyverno 1.19 prints a deprecation notice before the report (seen
	// with the real CLI): a notice, not a result.
	warned := append([]byte("Warning: p.yaml: kyverno.io/v1 ClusterPolicy is deprecated and will be removed in a future release\n"), read(t, "kyverno-report-fail.txt")...)
	if fs, _, err := ParseKyvernoReport(warned); err != nil || len(fs) != 1 || fs[0].Result != Fail {
		t.Errorf("report after a CLI warning: %+v, %v", fs, err)
	}
	for _, bad := range []string{"<html>", "apiVersion: v1\nkind: ConfigMap\n", "apiVersion: x\nkind: ClusterPolicyReport\nresults:\n- {policy: p, result: maybe}\n"} {
		if _, _, err := ParseKyvernoReport([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseConftest(t *testing.T) {
	fs, err := ParseConftest(read(t, "conftest-fail.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{Tool: "conftest", Policy: "main", Rule: "data.main.deny", Result: Fail, Message: "Deployment shop/web: image nginx:1.27 is not pinned by digest"},
		{Tool: "conftest", Policy: "main", Rule: "warn", Result: Warning, Message: "Deployment shop/web has no resource limits"},
		{Tool: "conftest", Policy: "unused", Result: Unbound, Message: "conftest ran no rule of namespace unused on the render: it checks nothing"},
	}
	if len(fs) != len(want) {
		t.Fatalf("findings = %+v", fs)
	}
	for i := range want {
		if fs[i] != want[i] {
			t.Errorf("finding %d = %+v, want %+v", i, fs[i], want[i])
		}
	}
	for _, bad := range []string{"", "null", "{}", "[{}]", "[] []", "FAIL - render.yaml"} {
		if _, err := ParseConftest([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The objects of red.yaml and green.yaml.
var (
	redObjects   = []Resource{{"apps/v1", "Deployment", "shop", "web"}, {"v1", "Service", "shop", "web"}}
	greenObjects = []Resource{{"apps/v1", "Deployment", "shop", "web"}}
)

// A tool must judge the render it was given: an answer that covers none of
// its objects, names what it does not hold, or is empty while policies were
// given is no verdict. The hostile answers come from stand-in scripts
// (testdata/fake): the real CLIs do not give them on demand.
func TestRunnersMustJudgeTheRender(t *testing.T) {
	ctx := context.Background()
	render := read(t, "red.yaml")
	policy := []string{abs(t, "kyverno/require-pinned.yaml")}
	rego := []string{abs(t, "conftest")}
	for _, c := range []struct{ script, reason, want string }{
		{"fake/kyverno-outside.sh", "judged something else", `"apps/v1 Deployment shop/elsewhere", which the render does not hold`},
		{"fake/kyverno-empty.sh", "judged nothing", "no result on any of the render's 2 objects"},
		{"fake/kyverno-noresults.sh", "judged nothing", "no result on any of the render's 2 objects"},
	} {
		t.Run(c.script, func(t *testing.T) {
			_, err := Kyverno(ctx, Options{Path: abs(t, c.script)}, policy, []string{"require-pinned"}, render, redObjects)
			noVerdict(t, err, c.reason)
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "kyverno ") {
				t.Errorf("err %q lacks %q", err, c.want)
			}
		})
	}
	for _, c := range []struct{ script, reason, want string }{
		{"fake/conftest-empty.sh", "judged nothing", "no result ([]) for the render"},
		{"fake/conftest-other.sh", "judged something else", `"/etc/elsewhere.yaml", which is not the render`},
	} {
		t.Run(c.script, func(t *testing.T) {
			_, err := Conftest(ctx, Options{Path: abs(t, c.script)}, rego, render)
			noVerdict(t, err, c.reason)
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "conftest ") {
				t.Errorf("err %q lacks %q", err, c.want)
			}
		})
	}
	// The coverage rules on their own: a result on the render passes, a
	// namespace-less object is named in "default".
	if err := checkKyvernoCoverage([]Resource{{"v1", "ConfigMap", "default", "c"}}, []Resource{{"v1", "ConfigMap", "", "c"}}, 1); err != nil {
		t.Errorf("default namespace: %v", err)
	}
	if err := checkConftestCoverage([]string{"render.yaml"}, "/tmp/x/render.yaml"); err != nil {
		t.Errorf("relative name: %v", err)
	}
}

// A run stopped from outside (--timeout, a signal) kills the tool and its
// children and removes the render's temporary copy before it returns.
func TestRunnerStoppedLeavesNoTempFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(200*time.Millisecond, func() { cancel(errors.New("--timeout 200ms exceeded")) })
	start := time.Now()
	_, err := Kyverno(ctx, Options{Path: abs(t, "fake/fork-hang.sh")}, []string{abs(t, "kyverno/require-pinned.yaml")}, []string{"require-pinned"}, read(t, "red.yaml"), redObjects)
	noVerdict(t, err, "stopped")
	if took := time.Since(start); took > time.Second {
		t.Errorf("returned after %v", took)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("TMPDIR holds %s", left[0].Name())
	}
}

// noVerdict asserts that err is a *NoVerdictError with the given reason.
func noVerdict(t *testing.T, err error, reason string) {
	t.Helper()
	var nv *NoVerdictError
	if !errors.As(err, &nv) || nv.Reason != reason {
		t.Fatalf("err = %v, want a no-verdict error %q", err, reason)
	}
}

// The failure modes below use stand-in scripts (testdata/fake): a real
// kyverno or conftest cannot be made to crash, hang or print garbage on
// demand. Missing tools need no stand-in.
func TestRunnersFailClosed(t *testing.T) {
	ctx := context.Background()
	render := read(t, "red.yaml")
	policy := []string{abs(t, "kyverno/require-pinned.yaml")}
	rego := []string{abs(t, "conftest")}
	cases := []struct {
		name, script, reason string
	}{
		{"missing", "fake/absent", "missing"},
		{"crash", "fake/crash.sh", "crashed"},
		{"killed", "fake/signal.sh", "crashed"},
		{"garbage", "fake/garbage.sh", "unparseable output"},
		{"hang", "fake/hang.sh", "timed out"},
	}
	for _, c := range cases {
		opts := Options{Path: abs(t, c.script), Timeout: 300 * time.Millisecond}
		t.Run("kyverno/"+c.name, func(t *testing.T) {
			_, err := Kyverno(ctx, opts, policy, []string{"require-pinned"}, render, redObjects)
			noVerdict(t, err, c.reason)
		})
		t.Run("conftest/"+c.name, func(t *testing.T) {
			_, err := Conftest(ctx, opts, rego, render)
			noVerdict(t, err, c.reason)
		})
	}
	t.Run("not-on-PATH", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := Conftest(ctx, Options{}, rego, render)
		noVerdict(t, err, "missing")
		_, err = Kyverno(ctx, Options{}, policy, nil, render, redObjects)
		noVerdict(t, err, "missing")
	})
}

func TestKyvernoRealCLI(t *testing.T) {
	bin := testutil.Tool(t, "KYVERNO", "kyverno")
	ctx := context.Background()
	files := [][]byte{read(t, "kyverno/require-pinned.yaml"), read(t, "kyverno/unused.yaml")}
	names, err := PolicyNames(files)
	if err != nil {
		t.Fatal(err)
	}
	policies := []string{abs(t, "kyverno/require-pinned.yaml"), abs(t, "kyverno/unused.yaml")}
	red, err := Kyverno(ctx, Options{Path: bin}, policies, names, read(t, "red.yaml"), redObjects)
	if err != nil {
		t.Fatal(err)
	}
	assertFindings(t, "red", red, map[Result]int{Fail: 1, Unbound: 1})
	if red[0].Policy != "require-pinned" || red[0].Rule != "pinned" || red[0].Resource == nil || red[0].Resource.Name != "web" {
		t.Errorf("red finding = %+v", red[0])
	}
	green, err := Kyverno(ctx, Options{Path: bin}, policies[:1], names[:1], read(t, "green.yaml"), greenObjects)
	if err != nil {
		t.Fatal(err)
	}
	assertFindings(t, "green", green, map[Result]int{})
	// kyverno names an object the render leaves without a namespace in
	// "default": still the render's object. A policy that matches nothing
	// prints no report at all: judged nothing.
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods.yaml")
	if err := os.WriteFile(pods, []byte(strings.NewReplacer("kinds: [Deployment]", "kinds: [Pod]", "name: require-pinned", "name: pods-pinned",
		"          template:\n            spec:\n              containers:\n              - image", "          containers:\n          - image").Replace(string(read(t, "kyverno/require-pinned.yaml")))), 0o600); err != nil {
		t.Fatal(err)
	}
	pod := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: nginx}]}\n")
	fs, err := Kyverno(ctx, Options{Path: bin}, []string{pods}, []string{"pods-pinned"}, pod, []Resource{{"v1", "Pod", "", "p"}})
	if err != nil {
		t.Fatal(err)
	}
	assertFindings(t, "namespace-less pod", fs, map[Result]int{Fail: 1})
	_, err = Kyverno(ctx, Options{Path: bin}, policies[:1], names[:1], pod, []Resource{{"v1", "Pod", "", "p"}})
	noVerdict(t, err, "judged nothing")
}

func TestConftestRealCLI(t *testing.T) {
	bin := testutil.Tool(t, "CONFTEST", "conftest")
	ctx := context.Background()
	rego := []string{abs(t, "conftest")}
	red, err := Conftest(ctx, Options{Path: bin}, rego, read(t, "red.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	assertFindings(t, "red", red, map[Result]int{Fail: 1})
	if !strings.Contains(red[0].Message, "nginx:1.27 is not pinned") || red[0].Policy != "main" {
		t.Errorf("red finding = %+v", red[0])
	}
	green, err := Conftest(ctx, Options{Path: bin}, rego, read(t, "green.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	assertFindings(t, "green", green, map[Result]int{})
}

func assertFindings(t *testing.T, name string, fs []Finding, want map[Result]int) {
	t.Helper()
	got := map[Result]int{}
	for _, f := range fs {
		got[f.Result]++
	}
	for _, r := range []Result{Fail, Warning, Error, Unbound} {
		if got[r] != want[r] {
			t.Errorf("%s: %d %s findings, want %d: %+v", name, got[r], r, want[r], fs)
		}
	}
}

func FuzzParseKyvernoReport(f *testing.F) {
	for _, s := range []string{"kyverno-report-fail.txt", "kyverno-report-skipped.txt"} {
		f.Add(read(f, s))
	}
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, seen, err := ParseKyvernoReport(b)
		if err == nil && seen == nil {
			t.Fatalf("no error and no seen map (%d findings)", len(fs))
		}
	})
}

func FuzzParseConftest(f *testing.F) {
	f.Add(read(f, "conftest-fail.json"))
	f.Add([]byte("[]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := ParseConftest(b)
		for _, x := range fs {
			if err == nil && x.Tool != "conftest" {
				t.Fatalf("finding from %q", x.Tool)
			}
		}
	})
}
