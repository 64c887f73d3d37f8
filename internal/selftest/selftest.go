package selftest

import (
	"context"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Mutant changes a copy of a passing render so that Rule must fire. Apply
// returns false when the render holds nothing to mutate (no digest to
// replace, no Rollout to break); the row is then "not applicable".
type Mutant struct {
	Rule  string
	Name  string
	Apply func(resources []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool)
}

// Row is one line of the selftest table.
type Row struct {
	Rule   string `json:"rule"`
	Mutant string `json:"mutant"`
	// Got is "fail" (the gate stopped it), "warn" (the rule only warned, so
	// the deploy would go on), "pass" (nothing fired) or "n/a" (the render
	// holds nothing to mutate for this rule).
	Got string `json:"got"`
	// Fired lists the rules that fired on the mutant.
	Fired []string `json:"fired,omitempty"`
}

// Caught reports whether the gate stopped the mutant (or it did not apply).
func (r Row) Caught() bool { return r.Got == "fail" || r.Got == "n/a" }

// Run checks that the baseline passes, then runs every mutant of every
// enabled rule. The baseline's own findings are returned when it fails.
// With failOnWarning, a warning stops the deploy, so it catches a mutant.
func Run(ctx context.Context, resources []*yaml.RNode, opts gate.Options, deps gate.Deps, failOnWarning bool) ([]Row, *gate.Report, error) {
	base, err := gate.Run(ctx, copyAll(resources), opts, deps)
	if err != nil {
		return nil, nil, fmt.Errorf("checking the baseline: %w", err)
	}
	if base.Verdict(failOnWarning) != gate.VerdictPass {
		return nil, base, nil
	}
	var rows []Row
	for _, m := range All() {
		if opts.Config.Rules[m.Rule] == "off" {
			continue
		}
		row, err := runMutant(ctx, m, resources, opts, deps, failOnWarning)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, row)
	}
	return withUncovered(rows, opts.Config), base, nil
}

// withUncovered adds an "n/a" row for every enabled static rule that no
// mutant covered, so the table lists every rule and says which were not
// proven on this render.
func withUncovered(rows []Row, cfg *config.Spec) []Row {
	covered := map[string]bool{}
	for _, r := range rows {
		covered[r.Rule] = true
	}
	for _, m := range appRules {
		covered[m] = true
	}
	for _, r := range rules.All() {
		if !covered[r.ID] && r.Check != nil && cfg.Rules[r.ID] != "off" {
			why := "no mutant for this render"
			if r.Mutation != "" {
				why += " (" + r.Mutation + ")"
			}
			rows = append(rows, Row{Rule: r.ID, Mutant: why, Got: "n/a"})
		}
	}
	return rows
}

func runMutant(ctx context.Context, m Mutant, resources []*yaml.RNode, opts gate.Options, deps gate.Deps, failOnWarning bool) (Row, error) {
	row := Row{Rule: m.Rule, Mutant: m.Name, Got: "n/a"}
	cfg := *opts.Config
	mutated, ok := m.Apply(copyAll(resources), &cfg)
	if !ok {
		return row, nil
	}
	opts.Config = &cfg
	rep, err := gate.Run(ctx, mutated, opts, deps)
	if err != nil {
		return row, fmt.Errorf("running mutant %q: %w", m.Name, err)
	}
	row.Got = "pass"
	seen := map[string]bool{}
	for _, f := range rep.Findings {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			row.Fired = append(row.Fired, f.Rule)
		}
		switch {
		case f.Rule != m.Rule:
		case f.Severity == rules.SeverityError, f.Severity == rules.SeverityWarning && failOnWarning:
			row.Got = "fail"
		case f.Severity == rules.SeverityWarning && row.Got == "pass":
			row.Got = "warn"
		}
	}
	return row, nil
}

// All returns every mutant, in rule order.
func All() []Mutant {
	var out []Mutant
	byRule := map[string][]Mutant{}
	for _, fam := range families {
		for _, m := range fam {
			byRule[m.Rule] = append(byRule[m.Rule], m)
		}
	}
	for _, r := range rules.All() {
		out = append(out, byRule[r.ID]...)
	}
	return out
}

// families lists the mutants; a rule family adds its list here.
var families = [][]Mutant{renderMutants, imageMutants, rolloutMutants, argocdMutants}

func copyAll(in []*yaml.RNode) []*yaml.RNode {
	out := make([]*yaml.RNode, len(in))
	for i, n := range in {
		out[i] = n.Copy()
	}
	return out
}
