package pipeline

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
)

// Reuse lets a run of the inputs at another revision (diff --base) take an
// Application source's render from a run of the same inputs in the working
// tree instead of rendering it again, and lets both runs leave it
// unchecked (Unchecked): only when the render cannot have changed. That is, when the source is the same (the
// directory, the Application's name and its kustomize:/directory: fields)
// and no changed path lies in a directory the render can read. The
// directories are the kustomization tree walked from the source (every
// resources:, bases:, components:, generators:, transformers: and
// validators: directory: with kustomize's default load restrictor a
// kustomization reads files only below its own directory), and every file
// the render's origin annotations name must lie in them (Unit.FilesRead).
// Anything the walk cannot vouch for renders again: a render that failed
// or carries no origin record, a remote resource, helmCharts:, a Helm,
// plugin or directory source, ref sources, an in-tree Gate or Pin, a
// symlink, a file outside the tree, --load-restrictor
// LoadRestrictionsNone, KRM functions, and Flux objects.
type Reuse struct {
	prior     map[string]*Unit // reusable units of the prior run by sourceKey
	Why       map[string]string
	mu        sync.Mutex
	reused    map[*Unit]*Unit
	unchecked map[*Unit]bool
}

// NewReuse returns what a run may take from prior, a run in the current
// working directory; changed are the absolute paths that differ between
// the revisions (a path ending in a separator is a directory: everything
// below it changed). Units it may not take are named in Why, with the
// reason.
func NewReuse(prior *Result, changed []string) *Reuse {
	r := &Reuse{prior: map[string]*Unit{}, Why: map[string]string{}, reused: map[*Unit]*Unit{}, unchecked: map[*Unit]bool{}}
	if prior == nil || prior.s == nil || prior.s.in.AppsRoot == "" {
		return r
	}
	o := prior.s.o.Render
	for _, u := range prior.Units {
		src, ok := u.Source.(*AppSource)
		if !ok {
			continue
		}
		why := ""
		switch {
		case o.LoadRestrictorNone:
			why = "--load-restrictor LoadRestrictionsNone lets kustomize read any file"
		case o.EnableAlphaPlugins || o.EnableExec:
			why = "KRM functions may read any file"
		default:
			why = reusable(prior.s.in.AppsRoot, u, src, changed)
		}
		if why != "" {
			r.Why[u.Input()] = why
			continue
		}
		key, err := sourceKey(prior.s.in.AppsRoot, src)
		if err != nil {
			r.Why[u.Input()] = err.Error()
			continue
		}
		r.prior[key] = u
	}
	return r
}

// Reused reports whether the run took u's render from the prior run
// instead of rendering it.
func (r *Result) Reused(u *Unit) bool {
	if r.s != nil && r.s.o.Precheck != nil && r.s.o.Precheck.p.Paired(u) {
		return true // the same render at both revisions, made by neither
	}
	if r.s == nil || r.s.o.Reuse == nil {
		return false
	}
	return r.s.o.Reuse.of(u) != nil
}

// Unchecked reports whether the run left u unchecked, in this run and the
// prior one, because nothing it reads changed (Reuse.Unchecked): its empty
// report says nothing about it.
func (r *Result) Unchecked(u *Unit) bool {
	if r.s != nil && r.s.o.Precheck != nil && r.s.o.Precheck.p.Paired(u) {
		return true
	}
	if r.s == nil || r.s.o.Reuse == nil {
		return false
	}
	return r.s.o.Reuse.IsUnchecked(u)
}

func (r *Reuse) of(u *Unit) *Unit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reused[u]
}

// reusable returns "" when u's render cannot have changed, else why it
// may have.
func reusable(root string, u *Unit, src *AppSource, changed []string) string {
	sp := src.spec
	switch {
	case u.Err != nil || src.skipped != "":
		return "its render failed or was skipped"
	case !u.injected:
		return "its render carries no record of the files it read"
	case u.found != nil:
		return "its render holds an in-tree Gate or Pin, whose policies may name any file"
	case len(u.remote) > 0:
		return "it names remote resources"
	case sp.Helm || sp.HelmSpec != nil || sp.Plugin || sp.Chart != "" || len(sp.Refs) > 0:
		return "a Helm, plugin or multi-source render"
	}
	dirs, why := kustomizeDirs(sp.Dir)
	if why != "" {
		return why
	}
	for _, d := range dirs {
		if why := noSymlinks(d); why != "" {
			return why
		}
	}
	inTree := func(p string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return below(p, d) })
	}
	for _, f := range u.FilesRead() {
		abs, err := filepath.Abs(f)
		if err != nil || !inTree(abs) {
			return fmt.Sprintf("its render read %s, outside the kustomization tree", f)
		}
		if slices.ContainsFunc(changed, func(c string) bool { return c == abs || below(abs, c) }) {
			return fmt.Sprintf("%s changed", f)
		}
	}
	for _, c := range changed {
		for _, d := range dirs {
			if below(c, d) || below(d, c) {
				return fmt.Sprintf("%s changed", c)
			}
		}
	}
	return ""
}

// below reports whether path p is d or lies below it; d may end in a
// separator.
func below(p, d string) bool {
	d = strings.TrimSuffix(d, string(filepath.Separator))
	p = strings.TrimSuffix(p, string(filepath.Separator))
	return p == d || strings.HasPrefix(p, d+string(filepath.Separator))
}

// sourceKey identifies an Application source across revisions: its
// directory relative to the checkout, the Application's name and its
// overrides.
func sourceKey(root string, s *AppSource) (string, error) {
	rel, err := filepath.Rel(root, s.spec.Dir)
	if err != nil {
		return "", fmt.Errorf("relating %s to %s: %w", s.spec.Dir, root, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s\x00%t\x00%t\x00%d", filepath.ToSlash(rel), s.spec.App, s.spec.Namespace, s.spec.Chart, s.spec.Helm, s.spec.Plugin, len(s.spec.Refs))
	for _, n := range []*yaml.RNode{s.spec.Kustomize, s.spec.Directory, s.spec.HelmSpec} {
		b.WriteString("\x00")
		if !n.IsNil() {
			b.WriteString(n.MustString())
		}
	}
	return b.String(), nil
}

// reuse, on a run with Options.Reuse, takes the render of a planned
// Application source from the prior run when it cannot have changed, and
// reports whether it did.
func (s *session) reuse(u *Unit) bool {
	r := s.o.Reuse
	src, ok := u.Source.(*AppSource)
	if r == nil || !ok || u.Err != nil || s.in.AppsRoot == "" {
		return false
	}
	key, err := sourceKey(s.in.AppsRoot, src)
	if err != nil {
		return false
	}
	p := r.prior[key]
	if p == nil {
		return false
	}
	u.Resources, u.placement, u.injected, u.remote, u.local, u.found = p.Resources, p.placement, p.injected, p.remote, p.local, p.found
	r.mu.Lock()
	r.reused[u] = p
	r.mu.Unlock()
	return true
}

// Unchecked marks, after both runs were planned (the prior, then this
// one with Options.Reuse), the units neither run needs to check: an
// Application source whose render this run took from the prior run, named
// the same in both, deploying no Application or Flux object of its own
// (whose rules would judge renders that may have changed). Nothing it
// reads changed, so its findings are the same in both runs: it is given an
// empty report in both, and Result.Unchecked lists it. It returns how many
// it marked.
func (r *Reuse) Unchecked() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for u, p := range r.reused {
		if u.Report != nil || u.Err != nil || len(p.apps) > 0 || len(p.expanded) > 0 || len(u.apps) > 0 || len(u.expanded) > 0 || p.Input() != u.Input() {
			continue
		}
		u.Report = &finding.Report{Resources: len(u.Resources)}
		p.Report = &finding.Report{Resources: len(p.Resources)}
		r.unchecked[u], r.unchecked[p] = true, true
		n++
	}
	return n
}

// IsUnchecked reports whether the unit was left unchecked because nothing it
// reads changed (Reuse.Unchecked): its empty report says nothing.
func (r *Reuse) IsUnchecked(u *Unit) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unchecked[u]
}

// maxKustomizationBytes bounds a kustomization file the walk reads.
const maxKustomizationBytes = 1 << 20

// kustomizeDirs returns the directories a kustomize render of dir can read
// files from (absolute, symlinks resolved): dir and every local
// kustomization its kustomization names, transitively. why is set when the
// walk cannot vouch for the render: a remote or missing entry, a Helm
// chart, a file it cannot read.
func kustomizeDirs(dir string) (dirs []string, why string) {
	start, err := filepath.Abs(dir)
	if err == nil {
		start, err = filepath.EvalSymlinks(start)
	}
	if err != nil {
		return nil, fmt.Sprintf("resolving %s: %v", dir, err)
	}
	queue := []string{start}
	seen := map[string]bool{}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if seen[d] {
			continue
		}
		seen[d] = true
		dirs = append(dirs, d)
		file := kustomizationFile(d)
		if file == "" {
			continue // a plain directory of manifests: all below d
		}
		data, err := fsbound.ReadRegular(file, file, maxKustomizationBytes)
		if err != nil {
			return nil, fmt.Sprintf("reading %s: %v", file, err)
		}
		entries, why := kustomizationRefs(data)
		if why != "" {
			return nil, fmt.Sprintf("%s: %s", file, why)
		}
		for _, e := range entries {
			p := filepath.Join(d, filepath.FromSlash(e))
			st, err := os.Lstat(p)
			resolved, rerr := filepath.EvalSymlinks(p)
			switch {
			case err != nil || rerr != nil:
				return nil, fmt.Sprintf("%s names %q, which is not a local file or directory (remote?)", file, e)
			case st.Mode()&fs.ModeSymlink != 0 || resolved != p:
				return nil, fmt.Sprintf("%s names %q, through a symlink", file, e)
			case st.IsDir():
				queue = append(queue, p)
			case !below(p, d):
				return nil, fmt.Sprintf("%s names %q, a file outside its directory", file, e)
			}
		}
	}
	return dirs, ""
}

// kustomizationFile returns the kustomization file of dir, or "".
func kustomizationFile(dir string) string {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, n)
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// kustomizationRefs returns the entries of a kustomization that may name
// other directories (resources, bases, components, generators,
// transformers, validators; inline configs left out), or why the walk
// cannot follow it: a remote entry, a Helm chart, YAML it cannot read.
func kustomizationRefs(data []byte) ([]string, string) {
	var k types.Kustomization
	if err := sigyaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Sprintf("not a kustomization the walk can read: %v", err)
	}
	if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 || k.HelmGlobals != nil {
		return nil, "helmCharts: Helm reads its chart itself"
	}
	var out []string
	for _, list := range [][]string{k.Resources, k.Bases, k.Components, k.Generators, k.Transformers, k.Validators} {
		for _, e := range list {
			switch {
			case strings.Contains(e, "\n"):
				continue // an inline config, part of this file
			case strings.Contains(e, "://"), strings.HasPrefix(e, "git@"), filepath.IsAbs(e) || strings.HasPrefix(e, "/"):
				return nil, fmt.Sprintf("%q is remote or absolute", e)
			}
			out = append(out, e)
		}
	}
	return out, ""
}

// noSymlinks returns why a directory tree cannot be vouched for: a symlink
// in it may lead anywhere.
func noSymlinks(dir string) string {
	why := ""
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			why = fmt.Sprintf("walking %s: %v", p, err)
			return filepath.SkipAll
		case d.Type()&fs.ModeSymlink != 0:
			why = fmt.Sprintf("%s is a symlink", p)
			return filepath.SkipAll
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		}
		return nil
	})
	return why
}
