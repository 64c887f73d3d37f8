package plugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// runCheck implements `check` and, with pin, `pin`: flags → options →
// pipeline.Run → report → exit code.
func runCheck(ctx context.Context, args []string, s Streams, version string, pin bool) int {
	name := "check"
	if pin {
		name = "pin"
	}
	o := &options{}
	fs := newFlagSet(name, o, pin)
	if done, code := parse(fs, args, s, 0); done {
		return code
	}
	if err := o.validate(pin); err != nil {
		return fail(s.Err, err)
	}
	if err := o.checkPaths(); err != nil {
		return fail(s.Err, err)
	}
	// --timeout bounds the whole run: renders (remote resources too),
	// rules, policies and registry look-ups (internal/stop).
	defer stop.SetDeadline(ctx, o.timeout)()
	base, err := loadConfig(o.configFile)
	if err != nil {
		return fail(s.Err, err)
	}
	o.denyRemoteFrom(base)
	printLogs := captureLogs(o.quiet)
	defer printLogs(s.Err) // on the paths that end before finish
	prog := progress(s, o)
	defer prog("") // every return path ends the progress line
	prog(fmt.Sprintf("rendering %d input(s): %s", len(o.kustomizations)+len(o.charts)+min(len(o.files), 1), firstInput(o)))
	popts := o.pipelineOptions(base, version, prog)
	popts.Pin = pin
	// Each render is dropped once checked; pin keeps it as the bytes it
	// prints (pipeline.Unit.KeepYAML), a tenth of the node trees.
	popts.ReleaseRenders = true
	res, err := pipeline.Run(ctx, o.inputs(s.In), popts)
	if err != nil {
		return fail(s.Err, err)
	}
	if code := usageErrors(s.Err, res); code != ExitPass {
		return code
	}
	total := res.Report()
	o.nameFlags(total)
	var out pipeline.Stream
	code := ExitPass
	for _, u := range res.Units {
		if u.Err != nil {
			code = max(code, exitCode(u.Err))
			continue
		}
		if pin {
			if err := out.Add(u); err != nil {
				return fail(s.Err, err)
			}
		}
	}
	if err := applyBaseline(o, base, total); err != nil {
		total.Failures = append(total.Failures, err.Error())
		code = max(code, exitCode(err))
	}
	if pin && o.writeKustomization != "" && code == ExitPass && !total.NoVerdict() {
		end := stop.Doing(ctx, "pinning "+o.writeKustomization)
		changes, failed, err := res.WriteKustomization(ctx, o.writeKustomization)
		end()
		for _, c := range changes {
			fmt.Fprintln(s.Err, c)
		}
		for _, f := range failed {
			// pin -k DIR --write-kustomization DIR finds a refused
			// signature twice: report it once.
			if !slices.ContainsFunc(total.Findings, func(g finding.Finding) bool { return g.Rule == f.Rule && g.Message == f.Message }) {
				total.Findings = append(total.Findings, f)
			}
		}
		if err != nil {
			total.Failures = append(total.Failures, err.Error())
			code = max(code, exitCode(err))
		}
	}
	if pin && o.locks.writeLock != "" && code == ExitPass && total.Verdict(o.failOn == config.FailOnWarning || res.FailOnWarning) == finding.VerdictPass {
		if err := o.writeLock(time.Now()); err != nil {
			total.Failures = append(total.Failures, err.Error())
			code = max(code, exitCode(err))
		}
	}
	v := verdict{o: o, pin: pin, version: version, failOnWarning: res.FailOnWarning, printLogs: printLogs}
	return v.finish(ctx, s, total, &out, code)
}

// verdict is what finish needs to print a run's report and decide its
// exit code.
type verdict struct {
	o       *options
	pin     bool
	version string
	// failOnWarning is set when a unit's config says failOn: warning.
	failOnWarning bool
	// printLogs prints kustomize's log lines once, as warnings.
	printLogs func(io.Writer)
}

// finish prints the report and, for pin, the render, and returns the exit
// code. A run that was stopped (the deadline, a signal) prints nothing: Run
// reports it.
func (r *verdict) finish(ctx context.Context, s Streams, total *finding.Report, out io.WriterTo, code int) int {
	if !stop.Commit(ctx) {
		return ExitNoVerdict
	}
	if ctx.Err() != nil {
		// The deadline or a signal came while the run unwound: no verdict,
		// whatever was checked.
		total.Failures = append(total.Failures, context.Cause(ctx).Error())
		code = max(code, ExitNoVerdict)
	}
	if r.printLogs != nil {
		r.printLogs(s.Err)
	}
	failOnWarning := r.o.failOn == config.FailOnWarning || r.failOnWarning
	reportTo, color := s.Out, s.OutIsTTY
	if r.pin {
		reportTo, color = s.Err, s.ErrIsTTY
	}
	if r.pin && s.reportErr != nil {
		reportTo = s.reportErr // pin -o github: its workflow commands are the gate's own
	}
	if err := report.Write(reportTo, total, r.o.reportOptions(color, failOnWarning, r.version)); err != nil {
		return fail(s.Err, err)
	}
	switch verdict := total.Verdict(failOnWarning); {
	case code == ExitUsage:
		// A usage error (a typo'd Gate in a kustomization) stays 2: the
		// run was misconfigured, whatever else it found.
	case verdict == finding.VerdictNoVerdict:
		code = max(code, ExitNoVerdict)
	case verdict == finding.VerdictFail:
		if code == ExitPass {
			code = ExitViolation
		}
	}
	// The pinned render is printed only when the gate passed: a partial or
	// unchecked stream must never reach `kubectl apply`.
	if r.pin && code == ExitPass {
		if _, err := out.WriteTo(s.Out); err != nil {
			return fail(s.Err, err)
		}
	}
	return code
}

// loadConfig reads --config.
func loadConfig(path string) (*config.Object, error) {
	if path == "" {
		return nil, nil
	}
	return config.Load(path)
}

// usageErrors prints, once each, the units' usage errors (a --crd that
// cannot be read, a typo'd in-tree Gate) and returns ExitUsage; ExitPass
// when there is none. The run was misconfigured, as with a bad flag: it
// prints no report and no verdict header, only what to fix.
func usageErrors(w io.Writer, res *pipeline.Result) int {
	seen := map[string]bool{}
	for _, u := range res.Units {
		if u.Err == nil || exitCode(u.Err) != ExitUsage || seen[u.Err.Error()] {
			continue
		}
		seen[u.Err.Error()] = true
		fail(w, u.Err)
	}
	if len(seen) == 0 {
		return ExitPass
	}
	return ExitUsage
}

// fail prints an error and returns its exit code.
func fail(w io.Writer, err error) int {
	fmt.Fprintf(w, "kubectl gate: %v\n", err)
	return exitCode(err)
}

// progress returns the run's progress reporter on stderr (report.Progress:
// a live line on a terminal after a second, a plain line every 10 s in a
// log, stage timings with -v); "" ends it. -q silences it.
func progress(s Streams, o *options) func(string) {
	if o.quiet {
		return func(string) {}
	}
	p := report.NewProgress(s.Err, s.ErrIsTTY, o.verbose)
	return func(msg string) {
		if msg == "" {
			p.Stop()
			return
		}
		p.Set(msg)
	}
}

// firstInput names the first input, for progress.
func firstInput(o *options) string {
	for _, in := range [][]string{o.kustomizations, o.charts, o.files} {
		if len(in) > 0 {
			return in[0]
		}
	}
	return ""
}
