package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestE2EExternalPoliciesRelativePaths: --kyverno-policy and --rego given
// as paths relative to the working directory reach the tools (which run in
// a scratch directory) and fire on the real CLIs; a --rego that is not a
// directory is a usage error. Before, a relative kyverno policy named
// nothing and kyverno exited 0: a pass on a policy that never ran.
func TestE2EExternalPoliciesRelativePaths(t *testing.T) {
	kyverno := testutil.Tool(t, "KYVERNO", "kyverno")
	conftest := testutil.Tool(t, "CONFTEST", "conftest")
	src := filepath.Join(testutil.Root(t), "internal", "policy", "external", "testdata")
	dir := t.TempDir()
	for _, f := range []string{"red.yaml", "green.yaml", "kyverno/require-pinned.yaml", "conftest/pinned.rego"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		testutil.WriteFiles(t, dir, map[string]string{f: string(data)})
	}
	// Only the policy rules: the inputs are small test objects.
	only := []string{"--digest", "off", "--rule", "schema=off"}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"kyverno, relative policy, red", []string{"check", "-f", "red.yaml", "--kyverno-policy", "kyverno/require-pinned.yaml", "--kyverno", kyverno}, 1, "require-pinned"},
		{"kyverno, relative policy, green", []string{"check", "-f", "green.yaml", "--kyverno-policy", "kyverno/require-pinned.yaml", "--kyverno", kyverno}, 0, "PASS"},
		{"conftest, relative dir, red", []string{"check", "-f", "red.yaml", "--rego", "conftest", "--conftest", conftest}, 1, "is not pinned"},
		{"rego dir missing", []string{"check", "-f", "red.yaml", "--rego", "nosuch", "--conftest", conftest}, 2, "--rego"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runGate(t, dir, append(c.args, only...)...)
			if r.Code != c.code || !strings.Contains(r.Stdout+r.Stderr, c.want) {
				t.Errorf("exit %d, want %d saying %q\n%s%s", r.Code, c.code, c.want, r.Stdout, r.Stderr)
			}
		})
	}
}
