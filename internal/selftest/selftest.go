package selftest

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
)

// Mutant is one of a rule's mutants (rules.Rule.Mutants), with the id of
// the rule it must make fire.
type Mutant struct {
	Rule string
	rules.Mutant
}

// Row is one line of the selftest table.
type Row struct {
	// Input names the input the row was run on (set by the shell).
	Input  string `json:"input,omitempty"`
	Rule   string `json:"rule"`
	Mutant string `json:"mutant"`
	// Got is "fail" (the gate stopped it), "warn" (the rule only warned, so
	// the deploy would go on), "waived" (the rule fired, but an exception
	// or waiver annotation waives it on this object, so the deploy would go
	// on), "pass" (nothing fired), "n/a" (the render holds nothing to
	// mutate for this rule) or "off" (the configuration turns the rule off,
	// so it was not tried).
	Got string `json:"got"`
	// Fired lists the rules that fired on the mutant.
	Fired []string `json:"fired,omitempty"`
	// WaivedBy, with Got "waived", names the waiver that makes the rule
	// unable to stop the mutated object: its source, owner, expiry and
	// reason.
	WaivedBy string `json:"waivedBy,omitempty"`
}

// Caught reports whether the gate stopped the mutant, or it was not tried
// (it did not apply, or the configuration turns its rule off: the user's
// choice, listed in the table but not a mutant that passed).
func (r Row) Caught() bool { return r.Got == "fail" || r.Got == "n/a" || r.Got == "off" }

// Run checks that the baseline passes, then runs every mutant of every
// enabled rule that changes the input alone. The baseline's own findings
// are returned when it fails. With failOnWarning, a warning stops the
// deploy, so it catches a mutant. RunApps runs the mutants that change the
// renders of Applications' sources.
func Run(ctx context.Context, resources []*yaml.RNode, opts gate.Options, deps gate.Deps, failOnWarning bool) ([]Row, *finding.Report, error) {
	return RunFinished(ctx, resources, opts, deps, failOnWarning, nil)
}

// RunFinished is Run with finish, when not nil, applied to the baseline's
// report before its verdict is taken: the shell's own step after the gate
// (the plugin drops the not-expanded finding of an ApplicationSet it
// expanded), so the baseline is judged as check judges the input.
func RunFinished(ctx context.Context, resources []*yaml.RNode, opts gate.Options, deps gate.Deps, failOnWarning bool, finish func(*finding.Report)) ([]Row, *finding.Report, error) {
	base, err := gate.Run(ctx, copyAll(resources), opts, deps)
	if err != nil {
		return nil, nil, fmt.Errorf("checking the baseline: %w", err)
	}
	if finish != nil {
		finish(base)
	}
	if base.Verdict(failOnWarning) != finding.VerdictPass {
		return nil, base, nil
	}
	rows, err := runAll(ctx, false, resources, opts, deps, failOnWarning)
	if err != nil {
		return nil, nil, err
	}
	return withUncovered(rows, opts.Config), base, nil
}

// RunApps runs the mutants of enabled rules that change the renders of the
// Applications' sources (gate.Options.Apps), on a render whose baseline
// passed (Run); without Applications their rows are "n/a".
func RunApps(ctx context.Context, resources []*yaml.RNode, opts gate.Options, deps gate.Deps, failOnWarning bool) ([]Row, error) {
	return runAll(ctx, true, resources, opts, deps, failOnWarning)
}

func runAll(ctx context.Context, apps bool, resources []*yaml.RNode, opts gate.Options, deps gate.Deps, failOnWarning bool) ([]Row, error) {
	var rows []Row
	for _, m := range All() {
		if m.NeedsApps != apps || opts.Config.Rules[m.Rule] == finding.Off {
			continue
		}
		row, err := runMutant(ctx, m, resources, opts, deps, failOnWarning)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// withUncovered adds an "n/a" row for every enabled static rule that no
// mutant covered, and an "off" row for every rule with a check or mutants
// that the configuration turns off, so the table lists every rule and says
// which were not proven on this render. Rules covered by RunApps count as
// covered.
func withUncovered(rows []Row, cfg *config.Spec) []Row {
	for _, r := range all.Rules() {
		if cfg.Rules[r.ID] == finding.Off && (r.Check != nil || len(r.Mutants) > 0) {
			rows = append(rows, Row{Rule: r.ID, Mutant: "the configuration turns this rule off: not tried", Got: "off"})
		}
	}
	covered := map[string]bool{}
	for _, r := range rows {
		covered[r.Rule] = true
	}
	for _, m := range All() {
		if m.NeedsApps {
			covered[m.Rule] = true
		}
	}
	for _, r := range all.Rules() {
		if !covered[r.ID] && r.Check != nil && cfg.Rules[r.ID] != finding.Off {
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
	s := &rules.Subject{Resources: copyAll(resources), Config: &cfg, Apps: append([]argo.AppSource(nil), opts.Apps...)}
	if !m.Apply(s) {
		return row, nil
	}
	opts.Config, opts.Apps = s.Config, s.Apps
	rep, err := gate.Run(ctx, s.Resources, opts, deps)
	if err != nil {
		return row, fmt.Errorf("running mutant %q: %w", m.Name, err)
	}
	Judge(&row, rep.Findings, failOnWarning)
	return row, nil
}

// Judge sets a mutant's row from the findings the gate made on it: Fired,
// and Got "fail" when a finding of the row's rule stops the deploy, else
// "waived" when one would but a waiver lets it through (WaivedBy names
// it), else "warn" or "pass".
func Judge(row *Row, fs []finding.Finding, failOnWarning bool) {
	row.Got, row.WaivedBy = "pass", ""
	for _, f := range fs {
		if !slices.Contains(row.Fired, f.Rule) {
			row.Fired = append(row.Fired, f.Rule)
		}
		stops := f.Severity == finding.SeverityError || f.Severity == finding.SeverityWarning && failOnWarning
		switch {
		case f.Rule != row.Rule:
		case stops && f.Suppressed != nil:
			if row.Got != "fail" {
				row.Got, row.WaivedBy = "waived", waivedBy(f.Suppressed)
			}
		case stops:
			row.Got, row.WaivedBy = "fail", ""
		case f.Severity == finding.SeverityWarning && row.Got == "pass":
			row.Got = "warn"
		}
	}
}

// waivedBy names a waiver in a row.
func waivedBy(s *finding.Suppression) string {
	return fmt.Sprintf("%s (owner %s, expires %s, reason: %s)", s.Source, s.Owner, s.Expires, s.Reason)
}

// All returns every mutant of every rule, in rule order.
func All() []Mutant {
	var out []Mutant
	for _, r := range all.Rules() {
		for _, m := range r.Mutants {
			out = append(out, Mutant{Rule: r.ID, Mutant: m})
		}
	}
	return out
}

func copyAll(in []*yaml.RNode) []*yaml.RNode {
	out := make([]*yaml.RNode, len(in))
	for i, n := range in {
		out[i] = n.Copy()
	}
	return out
}
