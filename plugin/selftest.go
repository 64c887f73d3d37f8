package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
)

// runSelftest implements `selftest`: every mutant of a passing render must
// be stopped.
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
	base, err := loadConfig(o.configFile)
	if err != nil {
		return fail(s.Err, err)
	}
	o.denyRemoteFrom(base)
	r := &runner{o: o, base: base, version: version, resolvers: newResolvers(o), progress: progress(s)}
	code := ExitPass
	var all []selftest.Row
	units, err := attachApps(ctx, o, loadUnits(ctx, o, s.In, r.progress), r.progress)
	if err != nil {
		return fail(s.Err, err)
	}
	for _, u := range units {
		rows, c := r.selftest(ctx, u, s.Err)
		code = max(code, c)
		all = append(all, rows...)
	}
	if err := printRows(s.Out, all, o.output); err != nil {
		return fail(s.Err, err)
	}
	for _, row := range all {
		if !row.Caught() && code == ExitPass {
			code = ExitViolation
		}
	}
	if code == ExitViolation {
		fmt.Fprintln(s.Err, "selftest: FAILED — the gate let a mutant through, or the baseline does not pass")
	}
	return code
}

// selftest runs the mutants of one unit.
func (r *runner) selftest(ctx context.Context, u *unit, errOut io.Writer) ([]selftest.Row, int) {
	if u.err != nil {
		fmt.Fprintf(errOut, "no verdict: %v\n", u.err)
		return nil, exitCode(u.err)
	}
	spec, err := specFor(u, r.base, r.o)
	if err != nil {
		return nil, fail(errOut, err)
	}
	crds, err := crdsFor(spec)
	if err != nil {
		return nil, fail(errOut, err)
	}
	opts := gate.Options{Config: spec, Placement: u.placement, Apps: u.apps, CRDs: crds}
	deps := gate.Deps{Version: r.version}
	if deps.Policy, err = r.policyChecker(spec, u); err != nil {
		return nil, fail(errOut, err)
	}
	if spec.Images.Digest == config.DigestVerify {
		if deps.Resolver, err = r.resolvers.For(ctx, spec, u.resources); err != nil {
			return nil, fail(errOut, err)
		}
	}
	rows, baseline, err := selftest.Run(ctx, u.resources, opts, deps, spec.FailOnWarning())
	if err != nil {
		return nil, fail(errOut, err)
	}
	if rows == nil && baseline != nil {
		fmt.Fprintf(errOut, "selftest: the baseline %s does not pass; selftest needs a render the gate passes:\n", u.name)
		_ = report.Write(errOut, baseline, report.Options{Format: "text"})
		if baseline.NoVerdict() {
			return nil, ExitNoVerdict
		}
		return nil, ExitViolation
	}
	more, err := selftest.RunApps(ctx, u.resources, opts, deps, spec.FailOnWarning())
	if err != nil {
		return nil, fail(errOut, err)
	}
	if u.generated != nil && u.generated.set != nil {
		row, err := r.appSetMutant(ctx, u, opts)
		if err != nil {
			return nil, fail(errOut, err)
		}
		more = append(more, row)
	}
	return append(rows, more...), ExitPass
}

func printRows(w io.Writer, rows []selftest.Row, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"mutants": rows})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tMUTANT\tEXPECTED\tGOT\tRULES FIRED")
	for _, row := range rows {
		got := strings.ToUpper(row.Got)
		if !row.Caught() {
			got += "  <-- MISSED: the gate would let this through"
		}
		fmt.Fprintf(tw, "%s\t%s\tfail\t%s\t%s\n", row.Rule, row.Mutant, got, strings.Join(row.Fired, ","))
	}
	return tw.Flush()
}
