package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/diff"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gitrev"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
	"github.com/kubectl-gate/kubectl-gate/internal/waiver"
)

// diffOptions are diff's own flags.
type diffOptions struct {
	base     string
	split    bool
	splitDir string
}

// runDiff implements `diff --base REF`: the pipeline on the inputs at REF,
// checked out in a temporary worktree, then on the working tree; the
// comparison is printed and the exit code is 1 only for new error
// findings, 3 when the head has no verdict.
func runDiff(ctx context.Context, args []string, s Streams, version string) int {
	o, d := &options{}, &diffOptions{}
	fs := newFlagSet("diff", o, false)
	fs.StringVar(&d.base, "base", "", "the git revision to compare with (a branch, tag or commit): rendered and checked in a temporary worktree")
	fs.BoolVar(&d.split, "split", false, "-o markdown: write parts of at most 65,536 characters to kubectl-gate-diff-N.md (in --split-dir) instead of cutting")
	fs.StringVar(&d.splitDir, "split-dir", ".", "with --split, the directory the parts are written to")
	if done, code := parse(fs, args, s, 0); done {
		return code
	}
	if err := validateDiff(o, d); err != nil {
		return fail(s.Err, err)
	}
	defer stop.SetDeadline(ctx, o.timeout)()
	base, err := loadConfig(o.configFile)
	if err != nil {
		return fail(s.Err, err)
	}
	o.denyRemoteFrom(base)
	cwd, top, err := where(ctx)
	if err != nil {
		return fail(s.Err, err)
	}
	if err := relativeInputs(o, cwd, top); err != nil {
		return fail(s.Err, err)
	}
	end := stop.Doing(ctx, "checking out "+d.base)
	wt, err := diff.Checkout(ctx, top, d.base)
	end()
	if err != nil {
		return fail(s.Err, usageErr("--base", "%v", err))
	}
	// The worktree goes on every path: success, failure, a crash of this
	// goroutine, the deadline and a signal (below, before Run gives up).
	defer wt.Remove()
	rel, _ := filepath.Rel(top, cwd)
	done := make(chan *diff.Report, 1)
	var usage []error // the head's usage errors, set before done is sent
	printLogs := captureLogs(o.quiet)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				fmt.Fprintf(s.Err, "kubectl gate: NO VERDICT: internal error: %v (a bug: please report it)\n", r)
				done <- nil
			}
		}()
		label := fmt.Sprintf("%s (%.12s)", d.base, wt.Rev)
		baseRun, headRun := sides(ctx, o, base, version, cwd, filepath.Join(wt.Dir, rel), wt.Dir, label, top, wt.Rev, s.Err)
		if usage = headUsage(headRun); len(usage) > 0 {
			done <- nil
			return
		}
		done <- diff.Compare(baseRun, headRun, o.kubernetesVersion)
	}()
	var rep *diff.Report
	select {
	case rep = <-done:
	case <-ctx.Done():
		wt.Remove()
		fmt.Fprintf(s.Err, "kubectl gate: NO VERDICT: diff --base %s: %v\n", d.base, context.Cause(ctx))
		return ExitNoVerdict
	}
	if len(usage) > 0 {
		// As check: the head is misconfigured (a typo'd in-tree Gate, a
		// kustomization entry the load restrictor refuses), whatever else
		// it found; a usage error at the base only is the base's no
		// verdict (diff.Compare): the change may be what fixes it.
		wt.Remove()
		fmt.Fprintf(s.Err, "kubectl gate: diff --base %s: the working tree (the head) has a usage error, so nothing is compared; fix it and run again:\n", d.base)
		for _, err := range usage {
			fail(s.Err, err)
		}
		return ExitUsage
	}
	if rep == nil || !stop.Commit(ctx) {
		wt.Remove()
		return ExitNoVerdict
	}
	printLogs(s.Err)
	if err := writeDiff(s.Out, rep, o.output, d); err != nil {
		return fail(s.Err, err)
	}
	switch {
	case len(rep.HeadNoVerdict) > 0:
		return ExitNoVerdict
	case rep.Counts.NewErrors > 0:
		return ExitViolation
	}
	return ExitPass
}

// headUsage returns the head's usage errors, once each: a usage error of
// the run (sides returns before the base is run) or of units (an
// Application whose kustomization holds a typo'd Gate), which check
// reports with exit 2 too (usageErrors).
func headUsage(head diff.Run) []error {
	var ue *config.UsageError
	if errors.As(head.Err, &ue) {
		return []error{head.Err}
	}
	if head.Result == nil {
		return nil
	}
	var errs []error
	seen := map[string]bool{}
	for _, u := range head.Result.Units {
		if u.Err == nil || !errors.As(u.Err, &ue) || seen[u.Err.Error()] {
			continue
		}
		seen[u.Err.Error()] = true
		errs = append(errs, u.Err)
	}
	return errs
}

// validateDiff checks diff's flags: those of check, a --base, a diff
// format, no stdin (a stream has no revision), and makes the trusted
// paths absolute: the base is run from inside its worktree.
func validateDiff(o *options, d *diffOptions) error {
	format := o.output
	o.output = "text"
	if err := o.validate(false); err != nil {
		return err
	}
	o.output = format
	if !slices.Contains(diff.Formats, format) {
		return usageErr("--output", "%q is not one of %s", format, strings.Join(diff.Formats, ", "))
	}
	if d.base == "" {
		return usageErr("--base", "required: the git revision to compare with (e.g. origin/main)")
	}
	if d.split && format != "markdown" {
		return usageErr("--split", "only with -o markdown")
	}
	if slices.Contains(o.files, "-") {
		return usageErr("-f", "diff reads its inputs at two revisions: - (stdin) has none")
	}
	// The trusted parts (config, CRDs, policies, cache, kubeconfig) come
	// from where the caller named them, for both sides.
	for _, p := range []*string{&o.configFile, &o.cacheDir, &o.kubeconfig, &d.splitDir} {
		if err := absolute(p); err != nil {
			return err
		}
	}
	for i := range o.crds {
		if err := absolute(&o.crds[i]); err != nil {
			return err
		}
	}
	for i := range o.policy.Paths {
		if err := absolute(&o.policy.Paths[i]); err != nil {
			return err
		}
	}
	return nil
}

// relativeInputs writes the inputs named by absolute paths relative to
// the working directory, so that each side reads them at its own revision;
// an input outside the repository has no revision (usage error).
func relativeInputs(o *options, cwd, top string) error {
	rel := func(flag string, p *string) error {
		if !filepath.IsAbs(*p) {
			return nil
		}
		abs := *p
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		in, err := filepath.Rel(top, abs)
		if err != nil || !filepath.IsLocal(in) && in != "." {
			return usageErr(flag, "%s is outside the git repository at %s: diff reads its inputs at two revisions of it", *p, top)
		}
		r, err := filepath.Rel(cwd, abs)
		if err != nil {
			return usageErr(flag, "%s: %v", *p, err)
		}
		*p = r
		return nil
	}
	for _, in := range []struct {
		flag  string
		paths []string
	}{{"-k", o.kustomizations}, {"-f", o.files}, {"--chart", o.charts}} {
		for i := range in.paths {
			if err := rel(in.flag, &in.paths[i]); err != nil {
				return err
			}
		}
	}
	if o.appsRoot != "" {
		return rel("--apps-root", &o.appsRoot)
	}
	return nil
}

func absolute(p *string) error {
	if *p == "" {
		return nil
	}
	abs, err := filepath.Abs(*p)
	if err != nil {
		return usageErr("flags", "%q: %v", *p, err)
	}
	*p = abs
	return nil
}

// where returns the working directory and the top of its git repository.
func where(ctx context.Context) (cwd, top string, err error) {
	if cwd, err = os.Getwd(); err == nil {
		cwd, err = filepath.EvalSymlinks(cwd)
	}
	if err != nil {
		return "", "", fmt.Errorf("finding the working directory: %w", err)
	}
	top, err = diff.Toplevel(ctx, cwd)
	if err != nil {
		return "", "", usageErr("diff", "%v", err)
	}
	return cwd, top, nil
}

// headBranch is the branch checked out at top, "" when detached.
func headBranch(ctx context.Context, top string) string {
	c, err := gitrev.Open(ctx, top, "")
	if err != nil {
		return ""
	}
	return c.Branch
}

// sides plans both runs, then checks them. With --apps-root, the
// Application sources that provably read nothing that differs between the
// revisions are rendered in neither run (pipeline.Precheck), and the base
// takes from the head the renders of the apps nothing changed for
// (pipeline.Reuse); neither side checks those apps (their findings cannot
// differ). The same relative paths name the same inputs at both
// revisions: each step runs in its side's directory (head, the working
// directory, or baseDir in the worktree at baseTop) and changes back to
// head.
func sides(ctx context.Context, o *options, cfg *config.Object, version, head, baseDir, baseTop, label, top, rev string, w io.Writer) (baseRun, headRun diff.Run) {
	headRun, baseRun = diff.Run{Label: "working tree"}, diff.Run{Label: label}
	changed, pre := changedPaths(ctx, o, top, rev, w)
	headRes, err := plan(ctx, o, cfg, version, head, head, nil, pre.Side(0, top), false)
	if err != nil {
		headRun.Err = fmt.Errorf("working tree: %w", err)
		var ue *config.UsageError
		if errors.As(err, &ue) {
			// A usage error (an --exclude-app naming no app) is the
			// caller's: exit 2, the base is not run.
			return baseRun, headRun
		}
	}
	var reuse *pipeline.Reuse
	if pre != nil && headRes != nil {
		reuse = pipeline.NewReuse(headRes, changed)
	}
	// The base worktree stands for the head's branch: sources tracking
	// it render from the base, as they do from the head.
	o.checkoutBranch = headBranch(ctx, top)
	if err := os.Chdir(baseDir); err != nil {
		baseRun.Err = fmt.Errorf("%s: the working directory does not exist at this revision: %w", label, err)
	} else if baseRes, err := plan(ctx, o, cfg, version, baseDir, head, reuse, pre.Side(1, baseTop), true); err != nil {
		baseRun.Err = fmt.Errorf("%s: %w", label, err)
	} else {
		baseRun.Result = baseRes
	}
	unchecked := 0
	if baseRun.Result != nil {
		unchecked = pre.Pair()
		if reuse != nil {
			unchecked += reuse.Unchecked()
		}
	}
	// What a side deferred and the other did not is rendered now, in the
	// side's directory.
	if headRes != nil {
		headRes.RenderDeferred(ctx)
	}
	if baseRun.Result != nil && os.Chdir(baseDir) == nil {
		baseRun.Result.RenderDeferred(ctx)
		_ = os.Chdir(head)
	}
	if unchecked > 0 {
		fmt.Fprintf(w, "kubectl gate: INFO: %d app(s) neither rendered again nor checked: neither their Application nor a file they read changed, so their findings are the same at both revisions; exception-unused, the checks' no-verdicts (image-resolve), a render failing at both revisions, and app-shared-object between them and the apps rendered are not judged in them\n", unchecked)
	}
	if headRes != nil {
		headRun.Result, headRun.Report = headRes, check(ctx, o, headRes, head, head, unchecked > 0)
	}
	if baseRun.Result != nil {
		baseRun.Report = check(ctx, o, baseRun.Result, baseDir, head, unchecked > 0)
	}
	return baseRun, headRun
}

// changedPaths lists, with --apps-root, the paths that differ between rev
// and the working tree of the repository at top, and the Precheck over
// them; nil, nil (everything is rendered at both revisions) without
// --apps-root or when git cannot list them (said on w).
func changedPaths(ctx context.Context, o *options, top, rev string, w io.Writer) ([]string, *pipeline.Precheck) {
	if o.appsRoot == "" {
		return nil, nil
	}
	changed, err := diff.ChangedPaths(ctx, top, rev)
	if err != nil {
		fmt.Fprintf(w, "kubectl gate: INFO: every app is rendered at both revisions: %v\n", err)
		return nil, nil
	}
	return changed, pipeline.NewPrecheck(top, changed)
}

// plan plans the inputs from dir and changes back to home. atBase lets an
// --exclude-app name an app the revision lacks (the pull request may add
// it); at the head that is a usage error.
func plan(ctx context.Context, o *options, cfg *config.Object, version, dir, home string, reuse *pipeline.Reuse, pre *pipeline.PrecheckSide, atBase bool) (*pipeline.Result, error) {
	if err := os.Chdir(dir); err != nil {
		return nil, fmt.Errorf("the working directory does not exist at this revision: %w", err)
	}
	defer os.Chdir(home)
	po := o.pipelineOptions(cfg, version, nil)
	po.Reuse = reuse
	po.Precheck = pre
	po.UnmatchedExclusionsOK = atBase
	return pipeline.Plan(ctx, o.inputs(nil), po)
}

// check checks a planned run from dir and returns its report; partial
// (apps left unchecked) drops exception-unused, which only a run that
// checked everything can say.
func check(ctx context.Context, o *options, res *pipeline.Result, dir, home string, partial bool) *finding.Report {
	if err := os.Chdir(dir); err == nil {
		defer os.Chdir(home)
	}
	res.Check(ctx)
	rep := res.Report()
	o.nameFlags(rep)
	if partial {
		rep.Findings = slices.DeleteFunc(rep.Findings, func(f finding.Finding) bool { return f.Rule == waiver.RuleUnused })
	}
	return rep
}

// writeDiff prints the report in its format; markdown with --split writes
// numbered files and prints their paths.
func writeDiff(w io.Writer, rep *diff.Report, format string, d *diffOptions) error {
	switch format {
	case "json":
		return rep.WriteJSON(w)
	case "html":
		return rep.WriteHTML(w)
	case "markdown":
		parts := rep.Markdown(diff.MaxComment, d.split)
		if !d.split {
			_, err := io.WriteString(w, parts[0])
			return err
		}
		for i, p := range parts {
			path := filepath.Join(d.splitDir, fmt.Sprintf("kubectl-gate-diff-%d.md", i+1))
			if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
				return fmt.Errorf("writing --split part: %w", err)
			}
			if _, err := fmt.Fprintln(w, path); err != nil {
				return err
			}
		}
		return nil
	}
	return rep.WriteText(w)
}
