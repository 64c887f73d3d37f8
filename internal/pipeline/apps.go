package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/flux"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
	"github.com/kubectl-gate/kubectl-gate/internal/workers"
)

// Argo CD Applications in the input, checked against what their sources
// render (README "Use: the kubectl plugin", --apps-root; the argocd rules in "Rules").
//
// With Inputs.AppsRoot, every Application's local source (spec.source.path,
// spec.sources[].path) is rendered from it as Argo CD would, and each
// distinct render becomes a unit of its own (AppSource): every rule runs on
// it, and its findings name the Application. The Application's unit gets
// the renders (gate.Options.Apps) for the argocd rules. Sources that render
// Applications again (app of apps) are followed, up to maxAppDepth levels.
// A source that does not exist or fails to render is a unit with an error:
// no verdict. Helm charts, plugins and other repositories are recorded as
// skipped, and argocd-source-not-rendered warns about them.
//
// Without AppsRoot, a -k render that holds an Application whose source
// path is the -k directory itself (a self-managed app) is checked against
// the rest of that render. Other Applications next to other resources (app
// of apps) are not: those resources are not what the Applications deploy, so
// they get the not-rendered warning instead of a false verdict.

const maxAppDepth = 5

// appLink ties an Application unit's AppSource to the unit of its render.
type appLink struct {
	app *Unit
	i   int
	src *Unit
}

// expander plans, level by level, the units the renders' Applications,
// ApplicationSets and Flux objects deploy.
type expander struct {
	s       *session
	helmCmd string  // kustomize's helm command with --enable-helm (HelmOptions.command)
	res     *Result // the run, for the units checked as soon as rendered (release)
	remotes []string
	byKey   map[string]*Unit
	links   []appLink
	// generated and fluxSources serve generate (generated.go).
	generated   map[string]bool
	fluxSources []*yaml.RNode
	// assume is set when the checkout names no repository (no git remote,
	// no --repo-url): the first repository a source names is taken as the
	// checkout (adopt), said once by an info finding, and every other
	// repository is no verdict naming --repo-url.
	assume  bool
	assumed string
	// exclude are the caller's exclusions (spec.argocd.exclude,
	// --exclude-app): what they name is neither rendered nor fetched.
	exclude []string
}

// excluded reports whether the caller took r out of scope.
func (a *expander) excluded(r *yaml.RNode) bool {
	for _, e := range a.exclude {
		if rules.ExcludeMatches(e, r) {
			return true
		}
	}
	return false
}

// exclusions are the trusted config's spec.argocd.exclude with the flags'
// (--exclude-app) applied.
func (s *session) exclusions() []string {
	spec := *config.Default()
	if s.o.Config != nil {
		spec = s.o.Config.Spec
	}
	spec = cloneSpec(spec)
	if s.o.Flags != nil {
		// A bad flag is reported by the unit's check (spec).
		_ = s.o.Flags(&spec)
	}
	return spec.ArgoCD.Exclude
}

// adopt, when the checkout names no repository yet, takes url as the
// checkout's and returns the info line that says so; else "".
func (a *expander) adopt(url string) string {
	if !a.assume || a.assumed != "" || url == "" {
		return ""
	}
	a.assumed = url
	a.remotes = []string{render.NormalizeRepoURL(url)}
	return fmt.Sprintf("the checkout at %s has no git remote and no --repo-url was given: the gate took it for %s, the first repository the inputs name, and renders every source of that repository from it; pass --repo-url %s to say so (or the checkout's own URL: then the sources of %s are not rendered)",
		a.s.in.AppsRoot, url, url, url)
}

// skipWhy adds to a skip reason, when the checkout was only assumed to be
// one repository, how to name it.
func (a *expander) skipWhy(why string) string {
	if a.assumed == "" || why == "" {
		return why
	}
	return why + "; the checkout has no git remote, so the gate took it for " + a.assumed + " (the first repository named): pass --repo-url with the checkout's repository"
}

// expand renders the Applications' sources and what the ApplicationSets
// and Flux objects generate, and returns the units with one more per
// distinct render. A render that fails is a unit with an error; the error
// returned is a usage error (AppsRoot is no directory).
func (s *session) expand(ctx context.Context, units []*Unit, res *Result) ([]*Unit, error) {
	root := s.in.AppsRoot
	if root == "" {
		for _, u := range units {
			selfManaged(u)
		}
		return units, nil
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, &config.UsageError{Where: "--apps-root", Err: fmt.Errorf("%q is not a directory", root)}
	}
	a := &expander{s: s, res: res, remotes: render.CheckoutURLs(root, s.in.RepoURLs), byKey: map[string]*Unit{}, exclude: s.exclusions()}
	a.assume = len(a.remotes) == 0
	// Argo CD builds a kustomize source with argocd-cm's
	// kustomize.buildOptions: --enable-helm says they hold --enable-helm,
	// as it does for -k.
	helmCmd, cleanup, helmErr := s.o.Helm.command(s.helmKubeVersion())
	defer cleanup()
	if helmErr == nil {
		a.helmCmd = helmCmd
	}
	level := units
	for depth := 0; depth < maxAppDepth && len(level) > 0; depth++ {
		var fresh []*Unit
		for _, u := range level {
			fresh = append(fresh, a.plan(ctx, u)...)
		}
		a.render(ctx, fresh)
		generated := a.generate(ctx, level)
		level = level[:0:0]
		for _, u := range fresh {
			if u.Source.(*AppSource).skipped == "" {
				level = append(level, u)
			}
		}
		level = append(level, generated...)
		units = append(units, level...)
	}
	// A source checked and released before a later level named one more
	// Application deploying it was checked without that Application (its
	// findings' names, the exceptions scoped to it): it renders again and
	// is checked with the others, whole.
	opts := a.renderOptions()
	for _, u := range units {
		if src, ok := u.Source.(*AppSource); ok && u.summary != nil && len(src.Apps) > src.named {
			u.Report, u.summary = nil, nil
			u.unkeep()
			renderSource(u, opts)
		}
	}
	for _, l := range a.links {
		l.src.linked = true
		as := &l.app.apps[l.i]
		if s.o.Precheck.link(l.src, as) {
			continue // not rendered yet (precheck.go)
		}
		as.Resources, as.Summary, as.Err = l.src.Resources, l.src.summary, l.src.Err
		if src, ok := l.src.Source.(*AppSource); ok {
			as.Skipped = src.skipped
		}
	}
	return units, nil
}

// plan lists the sources of the unit's Applications and returns the units
// of the renders not planned before.
func (a *expander) plan(ctx context.Context, u *Unit) []*Unit {
	if u.Err != nil {
		return nil
	}
	root := a.s.in.AppsRoot
	var fresh []*Unit
	for _, app := range u.Resources {
		if !argo.IsApplication(app) {
			continue
		}
		// An excluded Application is not rendered: nothing of it is
		// fetched or run (a remote base, a chart's remote dependency), and
		// argocd-source-not-rendered lists it as excluded.
		excluded := a.excluded(app)
		for _, src := range argo.Sources(app) {
			if !src.Manifests() {
				continue
			}
			as := argo.AppSource{App: app, Index: src.Index, Path: src.Path}
			if excluded {
				as.Skipped = "excluded by the caller: not rendered"
				u.apps = append(u.apps, as)
				continue
			}
			if src.Chart == "" {
				as.Assumed = a.adopt(src.RepoURL)
			}
			if why := render.SkipSource(root, a.remotes, src); why != "" {
				as.Skipped = a.skipWhy(why)
				u.apps = append(u.apps, as)
				continue
			}
			// The source renders from the revision it tracks (revisions.go).
			at := a.s.revs.argo(ctx, src.TargetRevision)
			as.Assumed = joinNotes(as.Assumed, at.Assumed)
			if at.Why != "" {
				as.Skipped = at.Why
				u.apps = append(u.apps, as)
				continue
			}
			spec, err := render.LocalSource(at.Root, app, src)
			var refNote string
			spec.Refs, spec.RefWhy, refNote = a.refRoots(ctx, app)
			as.Assumed = joinNotes(as.Assumed, refNote)
			as.Path = filepath.ToSlash(spec.Dir)
			if at.Label != "" {
				as.Path = filepath.ToSlash(filepath.Join(root, filepath.FromSlash(src.Path))) + " at " + at.Label
			}
			u.apps = append(u.apps, as)
			s, isNew := a.unitFor(app, src, spec, err, at.Label)
			if at.Label != "" {
				s.revRoot, s.root = at.Root, root
			}
			a.links = append(a.links, appLink{app: u, i: len(u.apps) - 1, src: s})
			if isNew {
				fresh = append(fresh, s)
			}
		}
	}
	return fresh
}

// unitFor returns the unit that renders a source, planning it when no
// Application planned the same render before; err (from LocalSource) makes
// a new unit fail.
func (a *expander) unitFor(app *yaml.RNode, src argo.Source, spec render.ArgoSource, err error, rev string) (*Unit, bool) {
	key := render.SourceKey(spec)
	name := argo.AppName(app) + " " + src.Field
	if u, ok := a.byKey[key]; ok {
		// An Application reachable twice (listed and a child of an app of
		// apps) is named once.
		as := u.Source.(*AppSource)
		if !slices.Contains(as.Apps, name) {
			as.Apps = append(as.Apps, name)
		}
		return u, false
	}
	u := &Unit{Source: &AppSource{Dir: spec.Dir, Apps: []string{name}, spec: spec, field: src.PathField(), path: src.Path, rev: rev}, dir: spec.Dir, Err: err}
	a.byKey[key] = u
	return u, true
}

// renderOptions are the run's render options for Application sources:
// with --enable-helm, kustomize sources render their helmCharts: too.
func (a *expander) renderOptions() render.Options {
	opts := a.s.renderOptions()
	if a.helmCmd != "" {
		opts.EnableHelm, opts.HelmCommand = true, a.helmCmd
	}
	return opts
}

// render renders the planned units concurrently.
func (a *expander) render(ctx context.Context, fresh []*Unit) {
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(renderJobs)
	var mu, checking sync.Mutex
	done := 0
	opts := a.renderOptions()
	for _, u := range fresh {
		if u.Err != nil || a.s.deferUnchanged(u) || a.s.reuse(u) {
			continue
		}
		g.Go(func() error {
			renderGuarded(ctx, u, opts)
			a.release(ctx, u, &checking)
			mu.Lock()
			done++
			a.s.progress(fmt.Sprintf("rendering %d/%d Application sources done", done, len(fresh)))
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
}

// release, on a run with Options.ReleaseRenders, checks a rendered
// Application source that deploys nothing the expansion reads again (no
// Application, ApplicationSet, Flux object or GitRepository: a leaf of the
// estate) as soon as it is rendered, keeps the Summary its Applications'
// rules read, and drops the render: the run's memory grows with the
// largest render, not with the estate. With Pin, the render is pinned by
// its check and kept as the bytes pin prints (Unit.KeepYAML). One unit is
// checked at a time (checking); the rules run on every core inside it.
func (a *expander) release(ctx context.Context, u *Unit, checking *sync.Mutex) {
	src, ok := u.Source.(*AppSource)
	o := a.s.o
	if !o.ReleaseRenders || o.Reuse != nil || !ok || u.Err != nil || src.skipped != "" || !leaf(u.Resources) {
		return
	}
	// The Summary is read before the check pins the render: the
	// Applications' rules read the render as Argo CD gets it from the
	// source, as when every render is held and the Applications' unit is
	// checked before its sources.
	sum := argo.Summarise(u.Resources)
	checking.Lock()
	a.res.checkUnit(ctx, u)
	checking.Unlock()
	src.named = len(src.Apps)
	u.summary = sum
	if o.Pin && u.Err == nil {
		u.KeepYAML() // outside the lock: it reads this unit alone
		return
	}
	u.Resources, u.local = nil, nil
}

// leaf reports whether a render holds nothing the expansion or the checks
// after it read again: no Argo CD or Flux object that deploys or names a
// source, no GitRepository.
func leaf(resources []*yaml.RNode) bool {
	if len(resources) <= workers.RangeSize {
		return leafIn(resources, nil) // one object a time for the streamed check: no allocation
	}
	var owner atomic.Bool
	workers.Ranges(len(resources), workers.RangeSize, func(lo, hi int) { // every core: see manifest.Count
		if !leafIn(resources[lo:hi], &owner) {
			owner.Store(true)
		}
	})
	return !owner.Load()
}

// leafIn is leaf over resources, giving up early once stop is set.
func leafIn(resources []*yaml.RNode, stop *atomic.Bool) bool {
	for _, r := range resources {
		if stop != nil && stop.Load() {
			return true
		}
		if IsAppOwner(r) || argo.IsArgoConfig(r) || flux.IsGitRepository(r) {
			return false
		}
	}
	return true
}

// renderGuarded renders an Application source on a worker: progress says
// so, and a panic in the render is the unit's error, not the run's crash.
func renderGuarded(ctx context.Context, u *Unit, opts render.Options) {
	defer func() {
		if err := stop.Recovered(recover()); err != nil {
			u.Err = err
		}
	}()
	end := stop.Doing(ctx, "rendering "+u.Input())
	renderSource(u, opts)
	end()
	u.unrevErr()
	if s := u.Source.(*AppSource); s.skipped != "" && u.revRoot != "" {
		s.skipped = u.unrevPath(s.skipped)
	}
}

func renderSource(u *Unit, opts render.Options) {
	s := u.Source.(*AppSource)
	res, err := render.RenderArgo(s.spec, opts)
	var skip *render.SkipError
	switch {
	case errors.As(err, &skip):
		s.skipped = skip.Reason
	case err != nil:
		u.Err = fmt.Errorf("Application %s: %s %q: %w", strings.Join(s.Apps, ", "), s.field, s.path, err)
	default:
		u.rendered(res)
	}
}

// selfManaged, without AppsRoot, takes a -k render as the source of an
// Application in it whose source path is the -k directory itself.
func selfManaged(u *Unit) {
	k, ok := u.Source.(*Kustomization)
	if !ok || u.Err != nil {
		return
	}
	abs, err := filepath.Abs(k.Dir)
	if err != nil {
		return
	}
	var rest []*yaml.RNode
	for _, r := range u.Resources {
		if !argo.IsArgoConfig(r) {
			rest = append(rest, r)
		}
	}
	for _, app := range u.Resources {
		if !argo.IsApplication(app) {
			continue
		}
		for _, src := range argo.Sources(app) {
			p := filepath.Clean(filepath.FromSlash(src.Path))
			plain := src.Chart == "" && !src.Helm && !src.Plugin && src.Kustomize == nil && src.Directory == nil
			if plain && p != "." && (abs == p || strings.HasSuffix(abs, string(filepath.Separator)+p)) {
				u.apps = append(u.apps, argo.AppSource{App: app, Index: src.Index, Path: k.Dir, Resources: rest})
			}
		}
	}
}
