package pipeline

import (
	"bytes"
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kustomize/api/konfig"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
)

// Precheck decides, before anything is rendered, which Application
// sources two runs of the same inputs at two revisions of one repository
// (diff --base: the head in the working tree, the base in a worktree of
// the revision) need not render at all: those that read nothing that
// differs between the revisions. Each run defers (does not render) the
// sources it can prove read only unchanged files (Precheck.Side); Pair
// then takes the sources both runs deferred, under the same source key
// and named the same, as unchanged (neither rendered nor checked, in
// either run), and RenderDeferred renders in each run the deferred
// sources that found no pair. Reuse (render, then the files the render
// read) still decides for every source rendered.
//
// A source is deferred only when all of this holds, else it renders:
//   - it renders from the checkout (not from another revision's worktree),
//     as kustomize or a plain directory: no Helm, chart, plugin, ref
//     sources, directory: options, KRM functions or
//     --load-restrictor LoadRestrictionsNone;
//   - the kustomization tree walked from it (kustomizeDirs: every local
//     resources:, components: … directory; kustomize's default load
//     restrictor keeps each kustomization's reads below its own
//     directory) lies in the repository, and no changed path lies in or
//     above any of its directories;
//   - every kustomization in the tree uses only fields that cannot change
//     an object's kind or read a file outside its directory (resources,
//     components, namespace, name prefix and suffix, labels, annotations,
//     images, replicas, ConfigMap and Secret generators, patches);
//   - no file in the tree, nor the Application's kustomize: field, could
//     make the render hold an Argo CD Application or ApplicationSet or a
//     Flux object (whose own sources would be expanded, and may have
//     changed): none names application or fluxcd, none holds a YAML escape (\), a tag (!!) or a JSON patch copy
//     or move (which could assemble such a name), no jsonnet file, no
//     symlink, no Helm chart, no file over 1 MiB.
//
// What a source left unrendered does not give: app-shared-object between
// it and the sources that were rendered (its objects are not known), and
// its render errors and the checks' no-verdicts, the same at both
// revisions. The caller says so.
type Precheck struct {
	changed []string // the paths that differ, relative to the repository top, slash-separated; a directory ends in /

	mu     sync.Mutex
	sides  [2]*PrecheckSide
	paired map[*Unit]bool
}

// PrecheckSide is one run's part of a Precheck (Options.Precheck).
type PrecheckSide struct {
	p        *Precheck
	top      string // the repository's top directory in this run's tree, absolute
	deferred map[*Unit]string
	links    map[*Unit][]*argo.AppSource
}

// NewPrecheck returns a Precheck over the paths that differ between the
// revisions (absolute, in the tree at top; a directory ends in a
// separator: everything below it differs).
func NewPrecheck(top string, changed []string) *Precheck {
	p := &Precheck{paired: map[*Unit]bool{}}
	for _, c := range changed {
		rel, err := filepath.Rel(top, c)
		if err != nil || !filepath.IsLocal(rel) {
			// A path outside the repository: nothing is proved.
			rel = "."
		}
		rel = filepath.ToSlash(rel)
		if strings.HasSuffix(c, string(filepath.Separator)) && rel != "." {
			rel += "/"
		}
		p.changed = append(p.changed, rel)
	}
	return p
}

// Side returns the part of the Precheck for run i (0 or 1) whose tree of
// the repository is at top.
func (p *Precheck) Side(i int, top string) *PrecheckSide {
	if p == nil {
		return nil
	}
	abs, err := filepath.Abs(top)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		abs = "" // nothing can be related to it: nothing is deferred
	}
	p.sides[i] = &PrecheckSide{p: p, top: abs, deferred: map[*Unit]string{}, links: map[*Unit][]*argo.AppSource{}}
	return p.sides[i]
}

// Paired reports whether u was left unrendered and unchecked in both runs.
func (p *Precheck) Paired(u *Unit) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paired[u]
}

// Pair takes, after both runs were planned, the sources both deferred
// under the same key and name as unchanged: they get an empty report (not
// checked) and their Applications say why they were not rendered. It
// returns how many it paired.
func (p *Precheck) Pair() int {
	if p == nil || p.sides[0] == nil || p.sides[1] == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	byKey := map[string]*Unit{}
	for u, key := range p.sides[1].deferred {
		byKey[key] = u
	}
	n := 0
	for u, key := range p.sides[0].deferred {
		b := byKey[key]
		if b == nil || b.Input() != u.Input() || p.paired[b] {
			continue
		}
		for _, x := range []struct {
			side *PrecheckSide
			u    *Unit
		}{{p.sides[0], u}, {p.sides[1], b}} {
			p.paired[x.u] = true
			x.u.Report = &finding.Report{}
			for _, as := range x.side.links[x.u] {
				as.Unchanged = "nothing it reads differs from the base"
			}
		}
		n++
	}
	return n
}

// RenderDeferred renders the sources this run deferred that Pair did not
// pair (the other run rendered them, or has no such source), and gives
// their renders to their Applications. Call it after Pair, in the run's
// working directory.
func (r *Result) RenderDeferred(ctx context.Context) {
	ps := r.s.o.Precheck
	if ps == nil {
		return
	}
	var todo []*Unit
	for _, u := range r.Units {
		if _, ok := ps.deferred[u]; ok && !ps.p.Paired(u) {
			todo = append(todo, u)
		}
	}
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(renderJobs)
	opts := r.s.renderOptions()
	for _, u := range todo {
		g.Go(func() error {
			renderGuarded(ctx, u, opts)
			return nil
		})
	}
	_ = g.Wait()
	for _, u := range todo {
		for _, as := range ps.links[u] {
			as.Resources, as.Summary, as.Err, as.Skipped = u.Resources, u.summary, u.Err, u.Source.(*AppSource).skipped
		}
	}
}

// link records that an Application's source is rendered by u, when u was
// deferred: Pair and RenderDeferred fill it in.
func (ps *PrecheckSide) link(u *Unit, as *argo.AppSource) bool {
	if ps == nil {
		return false
	}
	if _, ok := ps.deferred[u]; !ok {
		return false
	}
	ps.links[u] = append(ps.links[u], as)
	return true
}

// deferUnchanged reports whether the run defers the planned unit u: an
// Application source that provably reads nothing that changed (Precheck).
func (s *session) deferUnchanged(u *Unit) bool {
	ps := s.o.Precheck
	src, ok := u.Source.(*AppSource)
	if ps == nil || !ok || u.Err != nil || s.in.AppsRoot == "" || ps.top == "" {
		return false
	}
	sp := src.spec
	ro := s.o.Render
	switch {
	case src.rev != "" || src.skipped != "",
		ro.LoadRestrictorNone || ro.EnableAlphaPlugins || ro.EnableExec,
		sp.Helm || sp.HelmSpec != nil || sp.Plugin || sp.Chart != "" || len(sp.Refs) > 0 || len(sp.RefWhy) > 0,
		!sp.Directory.IsNil():
		return false
	}
	if !sp.Kustomize.IsNil() && !plainText([]byte(sp.Kustomize.MustString())) {
		return false
	}
	key, err := sourceKey(s.in.AppsRoot, src)
	if err != nil {
		return false
	}
	dirs, why := kustomizeDirs(sp.Dir)
	if why != "" {
		return false
	}
	for _, d := range dirs {
		rel, err := filepath.Rel(ps.top, d)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return false
		}
		rel = filepath.ToSlash(rel)
		if slices.ContainsFunc(ps.p.changed, func(c string) bool { return relBelow(c, rel) || relBelow(rel, c) }) {
			return false
		}
		if !plainTree(d, kustomizationFile(d) == "") {
			return false
		}
	}
	ps.p.mu.Lock()
	ps.deferred[u] = key
	ps.p.mu.Unlock()
	return true
}

// relBelow reports whether the slash path p is d or lies below it; "."
// is the top, above everything.
func relBelow(p, d string) bool {
	d, p = strings.TrimSuffix(d, "/"), strings.TrimSuffix(p, "/")
	return d == "." || p == d || strings.HasPrefix(p, d+"/")
}

// maxPlainFile bounds a file plainTree reads.
const maxPlainFile = 1 << 20

// allowedKustomizationFields are the kustomization fields a deferred
// source's tree may use: none changes an object's kind or API version,
// reads a file outside its directory, or runs anything.
var allowedKustomizationFields = map[string]bool{
	"apiVersion": true, "kind": true, "metadata": true, "resources": true, "bases": true, "components": true,
	"namespace": true, "namePrefix": true, "nameSuffix": true, "commonLabels": true, "labels": true,
	"commonAnnotations": true, "images": true, "replicas": true, "configMapGenerator": true,
	"secretGenerator": true, "generatorOptions": true, "patchesStrategicMerge": true, "patches": true,
	"buildMetadata": true, "sortOptions": true,
}

// plainTree reports whether the files directly in dir and below it are
// plain text that cannot make a render hold an Argo CD or Flux object
// (plainText), with no symlink, jsonnet or oversized file, and whether
// dir's kustomization uses only allowedKustomizationFields. plain says
// dir has no kustomization: it renders as a directory of manifests, so a
// Chart.yaml (a Helm chart) is refused.
func plainTree(dir string, plain bool) bool {
	kfiles := konfig.RecognizedKustomizationFileNames()
	ok := true
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil, d.Type()&fs.ModeSymlink != 0:
			ok = false
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case !d.Type().IsRegular(), strings.HasSuffix(p, ".jsonnet"), strings.HasSuffix(p, ".libsonnet"),
			plain && d.Name() == "Chart.yaml":
			ok = false
		default:
			data, rerr := fsbound.ReadRegular(p, p, maxPlainFile)
			if rerr != nil || !plainText(data) {
				ok = false
			} else if filepath.Dir(p) == dir && slices.Contains(kfiles, d.Name()) {
				ok = onlyAllowedFields(data)
			}
		}
		if !ok {
			return filepath.SkipAll
		}
		return nil
	})
	return ok
}

// plainText reports whether data can be taken at its word: it names no
// Argo CD Application or ApplicationSet kind and no Flux API group, and
// holds nothing that could assemble one (a YAML or JSON escape, a YAML
// tag, a JSON patch copy or move). Case is ignored.
func plainText(data []byte) bool {
	low := bytes.ToLower(data)
	for _, s := range []string{"application", "fluxcd", `\`, "!!", "copy", "move"} {
		if bytes.Contains(low, []byte(s)) {
			return false
		}
	}
	return true
}

// onlyAllowedFields reports whether a kustomization's top-level fields
// are all allowedKustomizationFields.
func onlyAllowedFields(data []byte) bool {
	var m map[string]any
	if err := sigyaml.Unmarshal(data, &m); err != nil {
		return false
	}
	for k := range m {
		if !allowedKustomizationFields[k] {
			return false
		}
	}
	return true
}
