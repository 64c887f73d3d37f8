package plugin

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
)

// parseFlags parses check/pin flags into options as runCheck does, without
// the binary.
func parseFlags(t *testing.T, pin bool, args ...string) (*options, error) {
	t.Helper()
	o := &options{}
	fs := newFlagSet("check", o, pin)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return o, o.validate(pin)
}

// TestFlagsIntoSpec: every verdict-changing flag lands in the config spec
// the gate runs with, validated as the config file would be.
func TestFlagsIntoSpec(t *testing.T) {
	o, err := parseFlags(t, false, "-k", "overlays/prod", "--expect-resources", "3", "--digest", "verify",
		"--platform", "linux/arm64", "--insecure-registry", "127.0.0.1:5000", "--rule", "rollout-single-writer=error",
		"--require-pinned-by", "--fail-on", "warning", "--jobs", "2", "--timeout", "30s")
	if err != nil {
		t.Fatal(err)
	}
	if o.jobs != 2 || o.timeout != 30*time.Second || len(o.kustomizations) != 1 {
		t.Errorf("options = %+v", o)
	}
	s := config.Default()
	s.Images.InsecureRegistries = []string{"registry.local"}
	if err := o.apply(s); err != nil {
		t.Fatal(err)
	}
	switch {
	case s.Render.ExpectResources == nil || *s.Render.ExpectResources != 3:
		t.Errorf("expectResources = %v", s.Render.ExpectResources)
	case s.Images.Digest != config.DigestVerify || s.Images.Platform != "linux/arm64":
		t.Errorf("images = %+v", s.Images)
	case strings.Join(s.Images.InsecureRegistries, ",") != "registry.local,127.0.0.1:5000":
		t.Errorf("insecure registries = %v", s.Images.InsecureRegistries)
	case s.Rules["rollout-single-writer"] != "error" || !s.Images.RequirePinnedBy || !s.FailOnWarning():
		t.Errorf("spec = %+v", s)
	}
}

// TestFlagsRejected: bad flag values are usage errors (exit 2) that name
// the flag; a misspelt rule id is caught by the config's validation.
func TestFlagsRejected(t *testing.T) {
	cases := []struct {
		args []string
		says string
	}{
		{nil, "no input"},
		{[]string{"-k", "x", "--output", "xml"}, "--output"},
		{[]string{"-k", "x", "--fail-on", "info"}, "--fail-on"},
		{[]string{"-k", "x", "--enable-exec"}, "needs --enable-alpha-plugins"},
		{[]string{"-k", "x", "--jobs", "0"}, "--jobs"},
		{[]string{"-k", "x", "--kubeconfig", "k"}, "--kubeconfig"},
		{[]string{"-k", "x", "--load-restrictor", "none"}, "--load-restrictor"},
	}
	for _, c := range cases {
		_, err := parseFlags(t, false, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.says) || exitCode(err) != ExitUsage {
			t.Errorf("%v: err = %v (exit %d), want a usage error saying %q", c.args, err, exitCode(err), c.says)
		}
	}
	// A misspelt rule id is a usage error, when the flags are parsed or at
	// the latest when they are applied to the config.
	o, err := parseFlags(t, false, "-k", "x", "--rule", "image-digset=off")
	if err == nil {
		err = o.apply(config.Default())
	}
	if !strings.Contains(fmt.Sprint(err), `unknown rule id "image-digset"`) || exitCode(err) != ExitUsage {
		t.Errorf("a misspelt rule id: %v (exit %d)", err, exitCode(err))
	}
	if _, err := parseFlags(t, true, "--write-kustomization", "overlays/prod"); err != nil {
		t.Errorf("pin --write-kustomization needs no other input: %v", err)
	}
}
