package policy_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	gatepolicy "github.com/kubectl-gate/kubectl-gate/internal/policy"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/policy"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestMutantsFireTheExamplePolicies: on the green example service, every
// mutant of the policy rule makes one of the example policies deny, and
// the unmutated render passes them all (what selftest relies on).
func TestMutantsFireTheExamplePolicies(t *testing.T) {
	root := filepath.Join(testutil.Root(t), "examples", "policies")
	set, err := gatepolicy.LoadPaths([]string{filepath.Join(root, "vap")})
	if err != nil {
		t.Fatal(err)
	}
	checker := &gatepolicy.Checker{Set: set}
	check := func(name string, s *rules.Subject) int {
		fs, err := checker.Check(context.Background(), s.Resources)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := &rules.Context{Resources: s.Resources, Config: config.Default(), Policy: fs}
		n := 0
		for _, f := range rules.Run(c, []rules.Rule{policy.Policy}) {
			if f.Severity == finding.SeverityError && f.Rule == "policy" {
				n++
			}
		}
		return n
	}
	fresh := func() *rules.Subject {
		res, err := render.Kustomize(filepath.Join(root, "base"), render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := config.Default()
		cfg.Policies = []config.Entry{{Path: filepath.Join(root, "vap")}}
		return &rules.Subject{Resources: res.Resources, Config: cfg}
	}
	if n := check("baseline", fresh()); n != 0 {
		t.Fatalf("baseline: %d policy errors", n)
	}
	for _, m := range policy.Policy.Mutants {
		s := fresh()
		if !m.Apply(s) {
			t.Errorf("%s: did not apply to the example service", m.Name)
			continue
		}
		if n := check(m.Name, s); n == 0 {
			t.Errorf("%s: no policy denied the mutant", m.Name)
		}
	}
}
