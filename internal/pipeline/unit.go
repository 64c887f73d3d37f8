package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// Unit is one render the run checks, and what checking it found.
type Unit struct {
	// Source is what was rendered; its type is the kind of source.
	Source Source
	// Resources are the render. With Options.Pin they are pinned in place;
	// nil once the render was released or kept as bytes (KeepYAML).
	Resources []*yaml.RNode
	// Err is why the unit has no verdict: its render or its check failed.
	// A *config.UsageError is a misconfiguration (a typo'd in-tree Gate).
	Err error
	// Report is what the rules found (after Check; nil with Err).
	Report *finding.Report
	// Config names the configuration that decided the verdict (after
	// Check).
	Config string

	dir       string            // the directory an in-tree config's relative paths start from
	placement []finding.Finding // gate-placement findings of the render
	found     *config.Object    // the Gate/Pin of the top-level kustomization
	injected  bool              // origin annotations were switched on by the gate
	// local are the render's local-config policies: kustomize hands them
	// to functions and drops them from its output; the rules see them, as
	// the function's do, and WriteYAML leaves them out.
	local  []*yaml.RNode
	remote []render.RemoteRef
	// apps are the Argo CD Applications (and Flux objects) of the render
	// with their sources' renders, for the argocd and flux rules.
	apps []argo.AppSource
	// expanded lists the ApplicationSets of this render that were expanded.
	expanded []string
	// seq is the unit's index in the run's Ownership (Result.ownership).
	seq int
	// summary is what the rules of the Applications deploying this render
	// read of it once the render was released (Options.ReleaseRenders).
	summary *argo.Summary
	// linked is set when an Application or Flux object of some unit
	// deploys this render: that unit's rules read its trees (apps).
	linked bool
	// printed, once kept is set, is the render as WriteYAML prints it
	// (KeepYAML), and printErr why it could not be: the trees are gone.
	printed  []byte
	printErr error
	kept     bool
	// streamed judged the render as it was read and released objects of
	// it (gate.Streamed); read is what was read, for a check that must
	// be whole after all.
	streamed *gate.Streamed
	read     *render.Read
	// revRoot, when set, is the temporary worktree directory that stood
	// for --apps-root (root) when the unit was rendered from another
	// revision: its findings name files under root (unrev), not under a
	// directory that is gone when the run ends.
	revRoot, root string
}

// unrev writes the paths of findings under the worktree the unit was
// rendered from (another revision) as under --apps-root, where the file
// is in the repository: the worktree is removed when the run ends, and
// its name changes from run to run (a SARIF result pointed at it, a
// baseline or a diff could not match it). The unit's input says which
// revision it is.
func (u *Unit) unrev(fs []finding.Finding) {
	if u.revRoot == "" {
		return
	}
	for i := range fs {
		f := &fs[i]
		if f.File != nil {
			c := *f.File
			c.Path = u.unrevPath(c.Path)
			f.File = &c
		}
		f.InputFile = u.unrevPath(f.InputFile)
		f.Message = u.unrevPath(f.Message)
	}
}

// unrevErr is unrev for why a unit has no verdict (a render error names
// the files it read).
func (u *Unit) unrevErr() {
	if u.revRoot != "" && u.Err != nil {
		u.Err = &unrevError{err: u.Err, msg: u.unrevPath(u.Err.Error())}
	}
}

// unrevPath writes the paths in s under revRoot as under root.
func (u *Unit) unrevPath(s string) string {
	from := filepath.ToSlash(filepath.Clean(u.revRoot)) + "/"
	to := filepath.ToSlash(filepath.Clean(u.root)) + "/"
	if to == "./" {
		to = ""
	}
	if s == strings.TrimSuffix(from, "/") {
		return strings.TrimSuffix(to, "/")
	}
	return strings.ReplaceAll(s, from, to)
}

// unrevError is an error whose message names the checkout's paths.
type unrevError struct {
	err error
	msg string
}

func (e *unrevError) Error() string { return e.msg }
func (e *unrevError) Unwrap() error { return e.err }

// Input names the unit as its findings' input does: "-k DIR", "-f FILE…",
// "--chart DIR", "Application NS/NAME spec.source from DIR",
// "ApplicationSet NS/NAME", "Flux Kustomization NS/NAME", ….
func (u *Unit) Input() string { return u.Source.Input() }

// FilesRead lists the files the render read that set what the objects say
// (the files objects came from, the kustomizations and patches that
// transformed them), as blame reads them. It is empty for a render that
// carries no origin annotations (-f, --chart). Call it before WriteYAML,
// which strips them.
func (u *Unit) FilesRead() []string {
	if !u.injected {
		return nil
	}
	return render.FilesRead(u.Resources)
}

// WriteYAML prints the render as a YAML stream, without the annotations
// the gate or its reader added. It edits the resources in place: they are
// not used after printing. Each document gets its own encoder: the yaml.v3
// emitter's event queue grows for the life of an encoder, which made one
// encoder (and kio.ByteWriter) over 10,000 objects cost 5 s and 1.2 GB.
// Into a *bytes.Buffer that holds something already, the first document
// is preceded by a separator too. A unit whose render was kept as bytes
// (KeepYAML) prints those.
func (u *Unit) WriteYAML(w io.Writer) error {
	first := true
	if b, ok := w.(*bytes.Buffer); ok && b.Len() > 0 {
		first = false
	}
	if !u.kept {
		return u.encode(w, first)
	}
	if u.printErr != nil {
		return u.printErr
	}
	if len(u.printed) == 0 {
		return nil
	}
	if !first {
		if _, err := io.WriteString(w, "---\n"); err != nil {
			return err
		}
	}
	_, err := w.Write(u.printed)
	return err
}

// KeepYAML prints the render as WriteYAML would (as the stream's first
// documents: no leading separator) into bytes the unit keeps, and drops
// its node trees: a render costs about a tenth of its trees as YAML. A
// failure to print is kept too, for WriteYAML and Stream.Add to return.
// Call it once nothing reads the render's trees again (after its check,
// FilesRead and blame); it does nothing the second time.
func (u *Unit) KeepYAML() {
	if u.kept {
		return
	}
	var b bytes.Buffer
	u.printErr = u.encode(&b, true)
	// An exact copy: the buffer's spare capacity would be kept with it.
	u.printed, u.kept = bytes.Clone(b.Bytes()), true
	u.Resources, u.local = nil, nil
}

// drop, once the unit is checked and nothing reads its trees again,
// drops them; with pin it keeps the bytes pin prints first (KeepYAML).
func (u *Unit) drop(pin bool) {
	if pin {
		u.KeepYAML()
		return
	}
	u.Resources, u.local = nil, nil
}

// unkeep forgets the bytes KeepYAML kept, for a render made again.
func (u *Unit) unkeep() { u.printed, u.printErr, u.kept = nil, nil, false }

// encode prints the render's documents, the first one after a separator
// unless first.
func (u *Unit) encode(w io.Writer, first bool) error {
	if u.injected {
		render.StripBuildAnnotations(u.Resources)
	}
	for _, n := range u.Resources {
		for _, a := range render.ReaderAnnotations {
			yamlpath.DeleteAnnotation(n.YNode(), a)
		}
		// The string "on" written quoted, as kustomize build writes it:
		// plain, kubectl apply -f reads the boolean true.
		stream.QuoteForKubectl(n.YNode())
		if !first {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		first = false
		enc := yaml.NewEncoder(w)
		enc.CompactSeqIndent()
		if err := enc.Encode(n.Document()); err != nil {
			return fmt.Errorf("writing the render of %s: %w", u.Source.name(), err)
		}
		if err := enc.Close(); err != nil {
			return fmt.Errorf("writing the render of %s: %w", u.Source.name(), err)
		}
	}
	return nil
}

// Stream is the renders of several units as one YAML stream, kept as
// bytes until it is written: the bytes of WriteYAML called for each unit,
// in turn, into one buffer.
type Stream struct {
	parts [][]byte
	n     int64
}

// Add keeps u's render (KeepYAML, which drops its trees) as the stream's
// next part, or returns why it cannot be printed.
func (s *Stream) Add(u *Unit) error {
	u.KeepYAML()
	if u.printErr != nil {
		return u.printErr
	}
	if len(u.printed) > 0 {
		s.parts = append(s.parts, u.printed)
		s.n += int64(len(u.printed))
	}
	return nil
}

// Len is how many bytes the stream holds, its separators left out.
func (s *Stream) Len() int64 { return s.n }

// WriteTo writes the stream: the parts, a separator between two.
func (s *Stream) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for i, p := range s.parts {
		if i > 0 {
			k, err := io.WriteString(w, "---\n")
			n += int64(k)
			if err != nil {
				return n, err
			}
		}
		k, err := w.Write(p)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// checked is what the rules see: the render and its local-config policies.
func (u *Unit) checked() []*yaml.RNode {
	if len(u.local) == 0 {
		return u.Resources
	}
	return slices.Concat(u.Resources, u.local)
}

// Source is what a unit renders: one type per kind of source. The types
// are *Kustomization, *Files, *Chart, *AppSource, *ApplicationSet,
// *FluxKustomization and *HelmRelease.
type Source interface {
	// Input names the source as the user gave it (Unit.Input).
	Input() string
	// name is what progress and stop messages call it.
	name() string
	// input names where one finding came from (-f with several files
	// names the file).
	input(f finding.Finding) string
	// finish edits the report after the rules ran: messages naming the
	// Application or generator, findings another unit reports.
	finish(u *Unit, rep *finding.Report)
	// mutants are selftest's mutants particular to this kind of source.
	mutants(ctx context.Context, s *session, u *Unit, opts gate.Options, deps gate.Deps, failOnWarning bool) ([]selftest.Row, error)
}

// Kustomization is a kustomization directory: -k, or a kustomization root
// -f -R found.
type Kustomization struct{ Dir string }

// Files are rendered manifests read with -f.
type Files struct{ Paths []string }

// Chart is a local Helm chart rendered with --chart.
type Chart struct{ Dir string }

// AppSource is the render of an Argo CD Application's local source, shared
// by every Application that deploys the same render.
type AppSource struct {
	// Dir is the source's directory; Apps the Applications (NS/NAME
	// FIELD) that deploy it.
	Dir  string
	Apps []string

	spec    render.ArgoSource
	field   string // spec.source or spec.sources[i], of the first Application
	path    string // as written in the Application
	skipped string // why the gate does not render it, when it does not
	rev     string // the revision it renders from when not the checkout's
	named   int    // len(Apps) when it was checked and released (expander.release)
}

// ApplicationSet is the Applications an ApplicationSet generates against
// the checkout (their sources are rendered on the next level).
type ApplicationSet struct {
	// Name is "ApplicationSet NS/NAME".
	Name string

	elements map[string]string // generated Application → its generator element
	set      *yaml.RNode       // the ApplicationSet, for selftest's mutant
}

// FluxKustomization is the render of a Flux Kustomization whose source is
// the checkout, as kustomize-controller renders it.
type FluxKustomization struct {
	// Name is "Flux Kustomization NS/NAME".
	Name string
}

// HelmRelease is the render of a Flux HelmRelease whose chart is a
// directory of the checkout, as helm-controller renders it.
type HelmRelease struct {
	// Name is "Flux HelmRelease NS/NAME".
	Name string
}

func (k *Kustomization) Input() string                       { return "-k " + k.Dir }
func (k *Kustomization) name() string                        { return k.Dir }
func (k *Kustomization) input(finding.Finding) string        { return k.Input() }
func (k *Kustomization) finish(u *Unit, rep *finding.Report) { u.dropExpanded(rep) }
func (k *Kustomization) mutants(context.Context, *session, *Unit, gate.Options, gate.Deps, bool) ([]selftest.Row, error) {
	return nil, nil
}

func (f *Files) Input() string { return "-f " + strings.Join(f.Paths, " ") }
func (f *Files) name() string  { return fmt.Sprint(f.Paths) }
func (f *Files) input(fd finding.Finding) string {
	if len(f.Paths) > 1 && fd.File != nil && fd.File.Path != "" {
		return "-f " + fd.File.Path
	}
	return f.Input()
}
func (f *Files) finish(u *Unit, rep *finding.Report) { u.dropExpanded(rep) }
func (f *Files) mutants(context.Context, *session, *Unit, gate.Options, gate.Deps, bool) ([]selftest.Row, error) {
	return nil, nil
}

func (c *Chart) Input() string                       { return "--chart " + c.Dir }
func (c *Chart) name() string                        { return c.Dir }
func (c *Chart) input(finding.Finding) string        { return c.Input() }
func (c *Chart) finish(u *Unit, rep *finding.Report) { u.dropExpanded(rep) }

func (a *AppSource) Input() string {
	if a.rev != "" {
		return "Application " + strings.Join(a.Apps, ", ") + " from " + a.path + " at " + a.rev
	}
	return "Application " + strings.Join(a.Apps, ", ") + " from " + a.Dir
}
func (a *AppSource) name() string                 { return a.Dir }
func (a *AppSource) input(finding.Finding) string { return a.Input() }

// finish names the Applications in the findings of a source's render, and
// drops its render-empty when it rendered nothing: argocd-source-empty
// reports that on the Application, once.
func (a *AppSource) finish(u *Unit, rep *finding.Report) {
	u.dropExpanded(rep)
	kept := rep.Findings[:0]
	for _, f := range rep.Findings {
		if f.Rule == "render-empty" && rep.Resources == 0 {
			continue
		}
		f.Message += " (source of Application " + strings.Join(a.Apps, ", ") + ")"
		kept = append(kept, f)
	}
	rep.Findings = kept
}

func (g *ApplicationSet) Input() string                { return g.Name }
func (g *ApplicationSet) name() string                 { return g.Name }
func (g *ApplicationSet) input(finding.Finding) string { return g.Name }

// finish names the generator element in the findings on a generated
// Application.
func (g *ApplicationSet) finish(u *Unit, rep *finding.Report) {
	u.dropExpanded(rep)
	for i := range rep.Findings {
		f := &rep.Findings[i]
		switch {
		case f.Rule == "render-empty":
			f.Message = g.Name + " generates no Application: Argo CD creates nothing, and deletes the Applications it generated before"
		case f.ResourceRef != nil && f.ResourceRef.Kind == "Application" && g.elements[f.ResourceRef.Name] != "":
			f.Message += " (generated by " + g.Name + " from " + g.elements[f.ResourceRef.Name] + ")"
		default:
			f.Message += " (rendered by " + g.Name + ")"
		}
	}
}

func (k *FluxKustomization) Input() string                { return k.Name }
func (k *FluxKustomization) name() string                 { return k.Name }
func (k *FluxKustomization) input(finding.Finding) string { return k.Name }
func (k *FluxKustomization) finish(u *Unit, rep *finding.Report) {
	u.dropExpanded(rep)
	renderedBy(rep, k.Name)
}
func (k *FluxKustomization) mutants(context.Context, *session, *Unit, gate.Options, gate.Deps, bool) ([]selftest.Row, error) {
	return nil, nil
}

func (h *HelmRelease) Input() string                { return h.Name }
func (h *HelmRelease) name() string                 { return h.Name }
func (h *HelmRelease) input(finding.Finding) string { return h.Name }
func (h *HelmRelease) finish(u *Unit, rep *finding.Report) {
	u.dropExpanded(rep)
	renderedBy(rep, h.Name)
}
func (h *HelmRelease) mutants(context.Context, *session, *Unit, gate.Options, gate.Deps, bool) ([]selftest.Row, error) {
	return nil, nil
}

// renderedBy names the controller that renders a unit in its findings.
func renderedBy(rep *finding.Report, by string) {
	for i := range rep.Findings {
		rep.Findings[i].Message += " (rendered by " + by + ")"
	}
}

// dropExpanded drops, on the unit that holds an expanded ApplicationSet,
// the warning that it was not expanded.
func (u *Unit) dropExpanded(rep *finding.Report) {
	if len(u.expanded) == 0 {
		return
	}
	kept := rep.Findings[:0]
	for _, f := range rep.Findings {
		if f.Rule == "argocd-source-not-rendered" && f.ResourceRef != nil && f.ResourceRef.Kind == "ApplicationSet" && slices.Contains(u.expanded, f.ResourceRef.Name) {
			continue
		}
		kept = append(kept, f)
	}
	rep.Findings = kept
}
