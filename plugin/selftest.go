package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// selftestTimeout is selftest's --timeout when none is given.
const selftestTimeout = 10 * time.Minute

// runSelftest implements `selftest`: every mutant of a passing render must
// be stopped. Each input (-k, -f, --chart, each Application source and
// generated unit of --apps-root) gets its own labelled table; an input
// whose baseline does not pass gets its findings instead, and the last
// lines on stderr say which of the two made selftest fail.
func runSelftest(ctx context.Context, args []string, s Streams, version string) int {
	o := &options{}
	fs := newFlagSet("selftest", o, false)
	fs.Lookup("output").Usage = "output format: text|json (the mutant table; the baseline's findings as check prints them)"
	if done, code := parse(fs, args, s, 0); done {
		return code
	}
	if err := o.validate(false); err != nil {
		return fail(s.Err, err)
	}
	if err := o.checkPaths(); err != nil {
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
	defer stop.SetDeadline(ctx, o.timeout)()
	base, err := loadConfig(o.configFile)
	if err != nil {
		return fail(s.Err, err)
	}
	o.denyRemoteFrom(base)
	prog := progress(s, o)
	defer prog("") // every return path ends the progress line
	res, err := pipeline.Plan(ctx, o.inputs(s.In), o.pipelineOptions(base, version, prog))
	if err != nil {
		return fail(s.Err, err)
	}
	inputs := res.Selftest(ctx)
	code := ExitPass
	for _, in := range inputs {
		c := selftestCode(in)
		if c == ExitUsage {
			return fail(s.Err, in.Err)
		}
		code = max(code, c)
	}
	// As check's finish: once the run was stopped, or the deadline or a
	// signal came while it unwound, nothing it tried is a verdict (a mutant
	// checked on a cancelled context is "caught" by its own errors).
	if !stop.Commit(ctx) {
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
func summarize(w io.Writer, inputs []*pipeline.SelftestInput) int {
	code, tried := ExitPass, 0
	for _, in := range inputs {
		switch in.Baseline {
		case pipeline.BaselineNoVerdict:
			fmt.Fprintf(w, "selftest: NO VERDICT on %s: %s\n", in.Input, in.Error)
			code = max(code, ExitNoVerdict)
		case pipeline.BaselineFail:
			fmt.Fprintf(w, "selftest: FAILED — the baseline of %s does not pass (%s, listed above): selftest cannot judge mutants against a red render, so none was run; fix those findings, or configure them (--config, --rule ID=warning|off), and run it again\n",
				in.Input, countFindings(in.Report))
			code = max(code, ExitViolation)
		}
		for _, row := range in.Mutants {
			if row.Got == "fail" || row.Got == "warn" || row.Got == "pass" || row.Got == "waived" {
				tried++
			}
			switch {
			case row.Got == "waived":
				fmt.Fprintf(w, "selftest: FAILED — the gate let a mutant through on %s: rule %s, mutation %q fired, and %s waives it: while that waiver stands, rule %s cannot stop a change to this object\n",
					in.Input, row.Rule, row.Mutant, row.WaivedBy, row.Rule)
				code = max(code, ExitViolation)
			case !row.Caught():
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

// selftestCode is the exit code one input's result calls for.
func selftestCode(in *pipeline.SelftestInput) int {
	switch {
	case in.Err != nil:
		return exitCode(in.Err)
	case in.Baseline == pipeline.BaselineFail:
		return ExitViolation
	case in.Baseline == pipeline.BaselineNoVerdict:
		return ExitNoVerdict
	}
	return ExitPass
}

// printInputs prints one labelled table per input (text), or every input
// and, for the readers of the flat list, every row (json).
func printInputs(w io.Writer, inputs []*pipeline.SelftestInput, format string) error {
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
		case pipeline.BaselinePass:
			fmt.Fprintf(w, "== %s: the baseline passes; %d mutant row(s)\n", in.Input, len(in.Mutants))
			if err := printRows(w, in.Mutants); err != nil {
				return err
			}
		case pipeline.BaselineFail:
			fmt.Fprintf(w, "== %s: the baseline does NOT pass; no mutant was run. Its findings:\n", in.Input)
			if err := report.Write(w, in.Report, report.Options{Format: "text"}); err != nil {
				return err
			}
		default:
			fmt.Fprintf(w, "== %s: NO VERDICT; no mutant was run: %s\n", in.Input, in.Error)
			if in.Report != nil {
				if err := report.Write(w, in.Report, report.Options{Format: "text"}); err != nil {
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
