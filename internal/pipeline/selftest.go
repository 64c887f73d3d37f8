package pipeline

import (
	"context"
	"errors"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// Baseline states of one selftest input.
const (
	BaselinePass      = "pass"
	BaselineFail      = "fail"
	BaselineNoVerdict = "no verdict"
)

// SelftestInput is selftest's result on one unit: its baseline and, when
// the baseline passed, its mutants.
type SelftestInput struct {
	Input string `json:"input"`
	// Baseline is BaselinePass, BaselineFail (the render has findings of
	// its own: no mutant can be judged against it) or BaselineNoVerdict
	// (the gate could not check it).
	Baseline string `json:"baseline"`
	// Findings are the baseline's findings when it did not pass.
	Findings []finding.Finding `json:"baselineFindings,omitempty"`
	// Error is why the input gave no verdict.
	Error   string         `json:"error,omitempty"`
	Mutants []selftest.Row `json:"mutants"`

	// Report is the baseline's report when it did not pass.
	Report *finding.Report `json:"-"`
	// Err is the error behind Error; a *config.UsageError is a
	// misconfiguration.
	Err error `json:"-"`
}

// Selftest runs every unit's baseline and, when it passes, its mutants:
// the rules' own (selftest.RunFinished, RunApps) and the ones particular
// to its kind of source (an ApplicationSet element, a Helm value). Each
// unit is judged with the configuration Check would use. It stops at the
// first unit whose configuration is a usage error, returning it last.
func (r *Result) Selftest(ctx context.Context) []*SelftestInput {
	var out []*SelftestInput
	for _, u := range r.Units {
		end := stop.Doing(ctx, "selftest of "+u.Source.name())
		in := r.s.selftest(ctx, u)
		end()
		out = append(out, in)
		var ue *config.UsageError
		if in.Err != nil && errors.As(in.Err, &ue) {
			break
		}
	}
	r.s.progress("")
	return out
}

// selftest runs the baseline and the mutants of one unit.
func (s *session) selftest(ctx context.Context, u *Unit) *SelftestInput {
	in := &SelftestInput{Input: u.Input(), Baseline: BaselineNoVerdict}
	noVerdict := func(err error) *SelftestInput {
		in.Error, in.Err = err.Error(), err
		return in
	}
	if u.Err != nil {
		return noVerdict(u.Err)
	}
	spec, err := s.spec(u)
	if err != nil {
		return noVerdict(err)
	}
	opts, deps, err := s.gateFor(ctx, u, spec, false)
	if err != nil {
		return noVerdict(err)
	}
	// The baseline is judged as check judges the input (Source.finish).
	finish := func(rep *finding.Report) { u.Source.finish(u, rep) }
	rows, baseline, err := selftest.RunFinished(ctx, u.checked(), opts, deps, spec.FailOnWarning(), finish)
	if err != nil {
		return noVerdict(err)
	}
	if rows == nil && baseline != nil {
		u.blame(baseline.Findings)
		for i := range baseline.Findings {
			if baseline.Findings[i].Input == "" {
				baseline.Findings[i].Input = in.Input
			}
		}
		in.Report, in.Findings = baseline, baseline.Findings
		if baseline.NoVerdict() {
			in.Error = "the baseline has findings that are no verdict (listed above)"
			return in
		}
		in.Baseline = BaselineFail
		return in
	}
	in.Baseline = BaselinePass
	more, err := selftest.RunApps(ctx, u.checked(), opts, deps, spec.FailOnWarning())
	if err != nil {
		return noVerdict(err)
	}
	own, err := u.Source.mutants(ctx, s, u, opts, deps, spec.FailOnWarning())
	if err != nil {
		return noVerdict(err)
	}
	in.Mutants = append(append(rows, more...), own...)
	for i := range in.Mutants {
		in.Mutants[i].Input = in.Input
	}
	return in
}
