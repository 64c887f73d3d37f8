package selftest_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// rolloutRuleIDs lists the rollout rules, each of which needs a mutant.
func rolloutRuleIDs() []string {
	var ids []string
	for _, r := range all.Rules() {
		if r.Family == "rollouts" {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// TestRolloutMutantsCoverEveryRule: selftest must be able to break every
// rollout rule.
func TestRolloutMutantsCoverEveryRule(t *testing.T) {
	have := map[string]bool{}
	for _, m := range selftest.All() {
		have[m.Rule] = true
	}
	for _, id := range rolloutRuleIDs() {
		if !have[id] {
			t.Errorf("no selftest mutant for %s", id)
		}
	}
}

// TestRolloutMutantsOnExamples runs selftest on the example apps: every
// rollout mutant that applies is stopped, and together the two apps give
// every rollout rule a row the gate caught.
func TestRolloutMutantsOnExamples(t *testing.T) {
	caught := map[string]bool{}
	for _, app := range []string{"canary", "bluegreen"} {
		dir := filepath.Join(testutil.Root(t), "examples", "rollouts", app)
		res, err := render.Kustomize(dir, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		obj, ok := res.Config()
		if !ok {
			t.Fatalf("%s: no Gate under validators:", app)
		}
		for _, row := range runSelftest(t, res.Resources, &obj.Spec) {
			if !strings.HasPrefix(row.Rule, "rollout-") {
				continue
			}
			if !row.Caught() {
				t.Errorf("%s: mutant %q of %s got %s (fired: %v)", app, row.Mutant, row.Rule, row.Got, row.Fired)
			}
			if row.Got == "fail" {
				caught[row.Rule] = true
				// rollout-invalid-spec is the controller's own verdict,
				// which also refuses what the narrower rules catch (one
				// Service for both roles, a selector the pods miss).
				fired := slices.DeleteFunc(slices.Clone(row.Fired), func(id string) bool {
					return id == "rollout-invalid-spec" && row.Rule != id
				})
				if len(fired) != 1 {
					t.Errorf("%s: mutant %q fired %v, want only %s", app, row.Mutant, row.Fired, row.Rule)
				}
			}
		}
	}
	for _, id := range rolloutRuleIDs() {
		if !caught[id] {
			t.Errorf("no example app proves %s goes red", id)
		}
	}
}

// TestSingleWriterMutantNeedsError: a warning does not stop a deploy, so
// the single-writer mutant is n/a unless the rule is raised to error.
func TestSingleWriterMutantNeedsError(t *testing.T) {
	res, err := render.Parse([]byte(`apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: ledger}
spec:
  selector: {matchLabels: {app: ledger}}
  template:
    metadata: {labels: {app: ledger}}
    spec:
      containers:
      - name: ledger
        image: registry.example.com/ledger@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
  strategy:
    canary:
      steps: [{setWeight: 50}, {pause: {}}]
`), "ledger.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for sev, want := range map[string]string{"": "n/a", "warning": "n/a", "error": "fail"} {
		cfg := config.Default()
		if sev != "" {
			cfg.Rules = map[string]string{"rollout-single-writer": sev}
		}
		for _, row := range runSelftest(t, res, cfg) {
			if row.Rule == "rollout-single-writer" && row.Got != want {
				t.Errorf("severity %q: got %s, want %s", sev, row.Got, want)
			}
		}
	}
}

func runSelftest(t *testing.T, res []*yaml.RNode, cfg *config.Spec) []selftest.Row {
	t.Helper()
	rows, base, err := selftest.Run(context.Background(), res, gate.Options{Config: cfg}, gate.Deps{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if rows == nil {
		t.Fatalf("the baseline does not pass: %+v", base.Findings)
	}
	return rows
}
