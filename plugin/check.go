package plugin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// runCheck implements `check` and, with pin, `pin`.
func runCheck(ctx context.Context, args []string, s Streams, version string, pin bool) int {
	name := "check"
	if pin {
		name = "pin"
	}
	o := &options{}
	fs := newFlagSet(name, o, pin)
	if done, code := parse(fs, args, s.Err); done {
		return code
	}
	if err := o.validate(pin); err != nil {
		return fail(s.Err, err)
	}
	// --timeout bounds the whole run: renders (remote resources too),
	// rules, policies and registry look-ups (stop.go).
	defer setDeadline(ctx, o.timeout)()
	base, err := loadConfig(o.configFile)
	if err != nil {
		return fail(s.Err, err)
	}
	o.denyRemoteFrom(base)
	r := &runner{o: o, base: base, pin: pin, version: version, resolvers: newResolvers(o), progress: progress(s)}
	r.printLogs = captureLogs()
	defer r.printLogs(s.Err) // on the paths that end before finish
	loaded := loadUnits(ctx, o, s.In, r.progress)
	for _, u := range loaded {
		// An input of the wrong shape (-f on a kustomization) is a usage
		// error: exit 2 before anything is checked, as a bad flag is.
		if u.err != nil && exitCode(u.err) == ExitUsage {
			return fail(s.Err, u.err)
		}
	}
	units, err := attachApps(ctx, o, loaded, r.progress)
	if err != nil {
		return fail(s.Err, err)
	}
	total := &finding.Report{}
	var out bytes.Buffer
	code := ExitPass
	configs := &configSources{}
	for _, u := range units {
		end := doing(ctx, "checking "+u.name)
		rep, err := r.check(ctx, u)
		end()
		if err != nil {
			total.Failures = append(total.Failures, err.Error())
			code = max(code, exitCode(err))
			continue
		}
		configs.add(u.input(o, finding.Finding{}), r.configSource(u))
		total.Merge(rep)
		if pin {
			if err := writeResources(&out, u); err != nil {
				return fail(s.Err, err)
			}
		}
	}
	r.progress("")
	total.Configs = configs.lines()
	if pin && o.writeKustomization != "" && code == ExitPass && !total.NoVerdict() {
		end := doing(ctx, "pinning "+o.writeKustomization)
		failed, err := writeKustomization(ctx, o, r, s.Err)
		end()
		total.Findings = append(total.Findings, failed...)
		if err != nil {
			total.Failures = append(total.Failures, err.Error())
			code = max(code, exitCode(err))
		}
	}
	return r.finish(ctx, s, total, &out, code)
}

// finish prints the report and, for pin, the render, and returns the exit
// code. A run that was stopped (the deadline, a signal) prints nothing: Run
// reports it.
func (r *runner) finish(ctx context.Context, s Streams, total *finding.Report, out *bytes.Buffer, code int) int {
	if !commit(ctx) {
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
	if err := report.Write(reportTo, total, report.Options{Format: r.o.output, Color: color, FailOnWarning: failOnWarning, Version: r.version, Rules: reportRules()}); err != nil {
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
		if _, err := s.Out.Write(out.Bytes()); err != nil {
			return fail(s.Err, err)
		}
	}
	return code
}

// runner checks units with one config base and one set of resolvers.
type runner struct {
	o         *options
	base      *config.Object
	pin       bool
	version   string
	resolvers *resolvers
	progress  func(string)
	// failOnWarning is set when a unit's config says failOn: warning.
	failOnWarning bool
	// printLogs prints kustomize's log lines once, as warnings.
	printLogs func(io.Writer)
}

// check runs the gate on one unit.
func (r *runner) check(ctx context.Context, u *unit) (*finding.Report, error) {
	if u.err != nil {
		return nil, u.err
	}
	spec, err := specFor(u, r.base, r.o)
	if err != nil {
		return nil, err
	}
	r.failOnWarning = r.failOnWarning || spec.FailOnWarning()
	if spec.Render.RemoteDenied() && len(u.remote) > 0 {
		// An in-tree Gate that denies remote resources is read after the
		// render that fetched them: the render is refused all the same.
		return nil, &render.RemoteError{Dir: u.name, Refs: u.remote}
	}
	// A Pin in the top-level kustomization is applied in process, as
	// kustomize would apply it (README "Use: the KRM function inside kustomize").
	pin := r.pin || (u.found != nil && u.found.Kind == config.KindPin)
	crds, err := crdsFor(spec)
	if err != nil {
		return nil, err
	}
	opts := gate.Options{Config: spec, Pin: pin, DropTag: r.o.dropTag, Placement: u.placement, Apps: u.apps, CRDs: crds}
	deps := gate.Deps{Version: r.version}
	if deps.Policy, err = r.policyChecker(spec, u); err != nil {
		return nil, err
	}
	if pin || spec.Images.Digest == config.DigestVerify {
		if deps.Resolver, err = r.resolvers.For(ctx, spec, u.resources); err != nil {
			return nil, err
		}
	}
	rep, err := u.finish(gate.Run(ctx, u.resources, opts, deps))
	if rep != nil {
		u.blame(rep.Findings)
		for i := range rep.Findings {
			if rep.Findings[i].Input == "" {
				rep.Findings[i].Input = u.input(r.o, rep.Findings[i])
			}
		}
	}
	return rep, err
}

// blame points each finding about a value at the file that set it: an
// overlay's patch rather than the base it overrode, with the line
// (render.Blame). Only kustomize renders carry the annotations it reads.
func (u *unit) blame(fs []finding.Finding) {
	if !u.injected {
		return
	}
	var byRef map[string]*yaml.RNode
	for i := range fs {
		f := &fs[i]
		value, ok := "", false
		if f.Field != nil {
			value, ok = f.Field.CurrentValue.(string)
		}
		if !ok || value == "" || f.ResourceRef == nil {
			continue
		}
		if byRef == nil {
			byRef = make(map[string]*yaml.RNode, len(u.resources))
			for _, r := range u.resources {
				byRef[refKey(r.GetKind(), r.GetNamespace(), r.GetName())] = r
			}
		}
		obj := byRef[refKey(f.ResourceRef.Kind, f.ResourceRef.Namespace, f.ResourceRef.Name)]
		if obj == nil {
			continue
		}
		b := render.Blame(obj, value)
		switch {
		case b == nil:
		case f.File != nil && f.File.Path == b.Path:
			f.File.Line = b.Line
		default:
			f.File = b
			if !strings.Contains(f.Message, b.Path) {
				f.Message += fmt.Sprintf(" (set by %s:%d)", b.Path, b.Line)
			}
		}
	}
}

func refKey(kind, ns, name string) string { return kind + "\x00" + ns + "\x00" + name }

// input names where a unit's finding came from, as the user gave it: the
// -k directory, the -f file, or the Argo CD Application whose source was
// rendered. With several inputs, identical findings are told apart by it.
func (u *unit) input(o *options, f finding.Finding) string {
	switch {
	case u.source != nil:
		return "Application " + strings.Join(u.source.apps, ", ") + " source " + u.dir
	case u.chart:
		return "--chart " + u.name
	case u.dir != "":
		return "-k " + u.dir
	case len(o.files) > 1 && f.File != nil && f.File.Path != "":
		return "-f " + f.File.Path
	}
	return "-f " + strings.Join(o.files, " ")
}

// loadConfig reads --config.
func loadConfig(path string) (*config.Object, error) {
	if path == "" {
		return nil, nil
	}
	return config.Load(path)
}

// writeResources prints a unit's resources as a YAML stream, without the
// annotations the gate or its reader added. It edits the resources in place:
// they are not used after printing. Each document gets its own encoder: the
// yaml.v3 emitter's event queue grows for the life of an encoder, which made
// one encoder (and kio.ByteWriter) over 10,000 objects cost 5 s and 1.2 GB.
func writeResources(w io.Writer, u *unit) error {
	if u.injected {
		render.StripBuildAnnotations(u.resources)
	}
	first := true
	if b, ok := w.(*bytes.Buffer); ok && b.Len() > 0 {
		first = false
	}
	for _, n := range u.resources {
		for _, a := range render.ReaderAnnotations {
			yamlpath.DeleteAnnotation(n.YNode(), a)
		}
		if !first {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		first = false
		enc := yaml.NewEncoder(w)
		enc.CompactSeqIndent()
		if err := enc.Encode(n.Document()); err != nil {
			return fmt.Errorf("writing the render of %s: %w", u.name, err)
		}
		if err := enc.Close(); err != nil {
			return fmt.Errorf("writing the render of %s: %w", u.name, err)
		}
	}
	return nil
}

// fail prints an error and returns its exit code.
func fail(w io.Writer, err error) int {
	fmt.Fprintf(w, "kubectl gate: %v\n", err)
	return exitCode(err)
}

// progress returns a progress printer that writes only to a TTY.
func progress(s Streams) func(string) {
	if !s.ErrIsTTY {
		return func(string) {}
	}
	return func(msg string) {
		fmt.Fprintf(s.Err, "\r\x1b[K%s", msg)
	}
}

// configSource says which configuration decides a unit's verdict: the
// caller's (--config, else the built-in defaults), the in-tree Gate/Pin
// and whether it may only tighten (config.Tighten), and flags. Every report
// says it (issue 9: a pull request's own Gate must not decide unseen).
func (r *runner) configSource(u *unit) string {
	desc := "built-in defaults"
	if r.o.configFile != "" {
		desc = "--config " + r.o.configFile
	}
	if f := u.found; f != nil {
		mode := "may only tighten it"
		if r.base != nil && r.base.Spec.AllowInTreeLoosening {
			mode = "decides alone: spec.allowInTreeLoosening"
		}
		img := f.Spec.Images
		if mode == "may only tighten it" && (len(img.Mirrors) > 0 || len(img.InsecureRegistries) > 0 || img.Platform != "") {
			mode += "; its registry settings are ignored"
		}
		desc += fmt.Sprintf(" + in-tree %s %s (%s)", f.Kind, f.Metadata.Name, mode)
	}
	if r.o.verdictFlags() {
		desc += " + flags"
	}
	return desc
}

// configSources groups inputs by the configuration that decided them.
type configSources struct {
	order  []string
	inputs map[string][]string
}

func (c *configSources) add(input, desc string) {
	if c.inputs == nil {
		c.inputs = map[string][]string{}
	}
	if _, ok := c.inputs[desc]; !ok {
		c.order = append(c.order, desc)
	}
	c.inputs[desc] = append(c.inputs[desc], input)
}

// lines is one line when every input had the same configuration, else one
// per configuration naming its inputs.
func (c *configSources) lines() []string {
	if len(c.order) == 1 {
		return []string{c.order[0]}
	}
	out := make([]string, 0, len(c.order))
	for _, desc := range c.order {
		out = append(out, desc+" (for "+strings.Join(c.inputs[desc], "; ")+")")
	}
	return out
}
