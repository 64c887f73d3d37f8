package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
)

// selftestTimeout is selftest's --timeout when none is given.
const selftestTimeout = 10 * time.Minute

// Baseline states of one selftest input.
const (
	baselinePass      = "pass"
	baselineFail      = "fail"
	baselineNoVerdict = "no verdict"
)

// selftestInput is selftest's result on one input: its baseline and, when
// the baseline passed, its mutants.
type selftestInput struct {
	Input string `json:"input"`
	// Baseline is "pass", "fail" (the render has findings of its own: no
	// mutant can be judged against it) or "no verdict" (the gate could not
	// check it).
	Baseline string `json:"baseline"`
	// Findings are the baseline's findings when it did not pass.
	Findings []finding.Finding `json:"baselineFindings,omitempty"`
	// Error is why the input gave no verdict.
	Error   string         `json:"error,omitempty"`
	Mutants []selftest.Row `json:"mutants"`

	report *finding.Report
	err    error
}

// runSelftest implements `selftest`: every mutant of a passing render must
// be stopped. Each input (-k, -f, --chart, each Application source and
// generated unit of --apps-root) gets its own labelled table; an input
// whose baseline does not pass gets its findings instead, and the last
// lines on stderr say which of the two made selftest fail.
func runSelftest(ctx context.Context, args []string, s Streams, version string) int {
	o := &options{}
	fs := newFlagSet("selftest", o, false)
	if done, code := parse(fs, args, s.Err); done {
		return code
	}
	if err := o.validate(false); err != nil {
		return fail(s.Err, err)
	}
	if o.output != "text" && o.output != "json" {
		return fail(s.Err, usageErr("--output", "selftest prints text or json"))
	}
	// --timeout bounds the whole run, as for check: the baseline renders,
	// every mutant's check and the registry look-ups (stop.go). Every
	// mutant re-runs the gate, so the default is longer than check's.
	if !fs.Changed("timeout") {
		o.timeout = selftestTimeout
	}
	defer setDeadline(ctx, o.timeout)()
	base, err := loadConfig(o.configFile)
	if err != nil {
		return fail(s.Err, err)
	}
	o.denyRemoteFrom(base)
	r := &runner{o: o, base: base, version: version, resolvers: newResolvers(o), progress: progress(s)}
	loaded := loadUnits(ctx, o, s.In, r.progress)
	for _, u := range loaded {
		// An input of the wrong shape is a usage error, as in check.
		if u.err != nil && exitCode(u.err) == ExitUsage {
			return fail(s.Err, u.err)
		}
	}
	units, err := attachApps(ctx, o, loaded, r.progress)
	if err != nil {
		return fail(s.Err, err)
	}
	code := ExitPass
	var inputs []*selftestInput
	for _, u := range units {
		in, c := r.selftest(ctx, u)
		if c == ExitUsage {
			return fail(s.Err, in.err)
		}
		code = max(code, c)
		inputs = append(inputs, in)
	}
	r.progress("")
	// As check's finish: once the run was stopped, or the deadline or a
	// signal came while it unwound, nothing it tried is a verdict (a mutant
	// checked on a cancelled context is "caught" by its own errors).
	if !commit(ctx) {
		return ExitNoVerdict
	}
	if ctx.Err() != nil {
		fmt.Fprintf(s.Err, "selftest: NO VERDICT: %v\n", context.Cause(ctx))
		return ExitNoVerdict
	}
	if err := printInputs(s.Out, inputs, o.output); err != nil {
		return fail(s.Err, err)
	}
	return max(code, summarize(s.Err, inputs))
}

// summarize says on w why selftest failed — which baselines do not pass,
// which mutants the gate let through, which inputs gave no verdict — or
// that it passed, and returns the exit code that follows from the rows.
func summarize(w io.Writer, inputs []*selftestInput) int {
	code, tried := ExitPass, 0
	for _, in := range inputs {
		switch in.Baseline {
		case baselineNoVerdict:
			fmt.Fprintf(w, "selftest: NO VERDICT on %s: %s\n", in.Input, in.Error)
			code = max(code, ExitNoVerdict)
		case baselineFail:
			fmt.Fprintf(w, "selftest: FAILED — the baseline of %s does not pass (%s, listed above): selftest cannot judge mutants against a red render, so none was run; fix those findings, or configure them (--config, --rule ID=warning|off), and run it again\n",
				in.Input, countFindings(in.report))
			code = max(code, ExitViolation)
		}
		for _, row := range in.Mutants {
			if row.Got == "fail" || row.Got == "warn" || row.Got == "pass" {
				tried++
			}
			if !row.Caught() {
				fmt.Fprintf(w, "selftest: FAILED — the gate let a mutant through on %s: rule %s, mutation %q got %s (rules fired: %s)\n",
					in.Input, row.Rule, row.Mutant, strings.ToUpper(row.Got), firedOrNone(row.Fired))
				code = max(code, ExitViolation)
			}
		}
	}
	if code == ExitPass {
		fmt.Fprintf(w, "selftest: PASSED — the gate stopped all %d mutant(s) tried on %d input(s)\n", tried, len(inputs))
	}
	return code
}

func countFindings(rep *finding.Report) string {
	if rep == nil {
		return "no findings"
	}
	var errs, warns int
	for _, f := range rep.Findings {
		switch f.Severity {
		case finding.SeverityError:
			errs++
		case finding.SeverityWarning:
			warns++
		}
	}
	return fmt.Sprintf("%d error(s), %d warning(s)", errs, warns)
}

func firedOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// inputLabel names a unit as findings' input does: the -k directory, the
// --chart, the Application whose source it is, the generator, or the -f
// files.
func inputLabel(u *unit, o *options) string {
	switch {
	case u.source != nil:
		return "Application " + strings.Join(u.source.apps, ", ") + " source " + u.dir
	case u.generated != nil:
		return u.generated.by
	case u.dir != "":
		return "-k " + u.dir
	case slices.Contains(o.helm.charts, u.name):
		return "--chart " + u.name
	}
	return "-f " + strings.Join(o.files, " ")
}

// selftest runs the baseline and the mutants of one unit, with the
// config check would use (specFor: --config, the in-tree Gate, flags).
func (r *runner) selftest(ctx context.Context, u *unit) (*selftestInput, int) {
	in := &selftestInput{Input: inputLabel(u, r.o), Baseline: baselineNoVerdict}
	noVerdict := func(err error) (*selftestInput, int) {
		in.Error, in.err = err.Error(), err
		return in, exitCode(err)
	}
	if u.err != nil {
		return noVerdict(u.err)
	}
	spec, err := specFor(u, r.base, r.o)
	if err != nil {
		return noVerdict(err)
	}
	crds, err := crdsFor(spec)
	if err != nil {
		return noVerdict(err)
	}
	opts := gate.Options{Config: spec, Placement: u.placement, Apps: u.apps, CRDs: crds}
	deps := gate.Deps{Version: r.version}
	if deps.Policy, err = r.policyChecker(spec, u); err != nil {
		return noVerdict(err)
	}
	if spec.Images.Digest == config.DigestVerify {
		if deps.Resolver, err = r.resolvers.For(ctx, spec, u.resources); err != nil {
			return noVerdict(err)
		}
	}
	// The baseline is judged as check judges the input (u.finish).
	finish := func(rep *finding.Report) { _, _ = u.finish(rep, nil) }
	rows, baseline, err := selftest.RunFinished(ctx, u.resources, opts, deps, spec.FailOnWarning(), finish)
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
		in.report, in.Findings = baseline, baseline.Findings
		if baseline.NoVerdict() {
			in.Error = "the baseline has findings that are no verdict (listed above)"
			return in, ExitNoVerdict
		}
		in.Baseline = baselineFail
		return in, ExitViolation
	}
	in.Baseline = baselinePass
	more, err := selftest.RunApps(ctx, u.resources, opts, deps, spec.FailOnWarning())
	if err != nil {
		return noVerdict(err)
	}
	if u.generated != nil && u.generated.set != nil {
		row, err := r.appSetMutant(ctx, u, opts)
		if err != nil {
			return noVerdict(err)
		}
		more = append(more, row)
	}
	if row, ok, err := r.helmMutant(ctx, u, opts, deps, spec.FailOnWarning()); err != nil {
		return noVerdict(err)
	} else if ok {
		more = append(more, row)
	}
	in.Mutants = append(rows, more...)
	for i := range in.Mutants {
		in.Mutants[i].Input = in.Input
	}
	return in, ExitPass
}

// printInputs prints one labelled table per input (text), or every input
// and, for the readers of the flat list, every row (json).
func printInputs(w io.Writer, inputs []*selftestInput, format string) error {
	if format == "json" {
		all := []selftest.Row{}
		for _, in := range inputs {
			all = append(all, in.Mutants...)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"inputs": inputs, "mutants": all})
	}
	for i, in := range inputs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		switch in.Baseline {
		case baselinePass:
			fmt.Fprintf(w, "== %s: the baseline passes; %d mutant row(s)\n", in.Input, len(in.Mutants))
			if err := printRows(w, in.Mutants); err != nil {
				return err
			}
		case baselineFail:
			fmt.Fprintf(w, "== %s: the baseline does NOT pass; no mutant was run. Its findings:\n", in.Input)
			if err := report.Write(w, in.report, report.Options{Format: "text"}); err != nil {
				return err
			}
		default:
			fmt.Fprintf(w, "== %s: NO VERDICT; no mutant was run: %s\n", in.Input, in.Error)
			if in.report != nil {
				if err := report.Write(w, in.report, report.Options{Format: "text"}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func printRows(w io.Writer, rows []selftest.Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tMUTANT\tEXPECTED\tGOT\tRULES FIRED")
	for _, row := range rows {
		got, expected := strings.ToUpper(row.Got), "fail"
		if !row.Caught() {
			got += "  <-- MISSED: the gate would let this through"
		}
		if row.Got == "off" {
			expected = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", row.Rule, row.Mutant, expected, got, strings.Join(row.Fired, ","))
	}
	return tw.Flush()
}
