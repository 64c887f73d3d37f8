package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
)

// Argo CD Applications in the input, checked against what their sources
// render (README "Use: the kubectl plugin", --apps-root; the argocd rules in "Rules").
//
// With --apps-root DIR, every Application's local source (spec.source.path,
// spec.sources[].path) is rendered from DIR as Argo CD would, and each
// distinct render becomes a unit of its own: every rule runs on it, and its
// findings name the Application. The Application's unit gets the renders
// (gate.Options.Apps) for the argocd rules. Sources that render Applications
// again (app of apps) are followed, up to maxAppDepth levels. A source that
// does not exist or fails to render is a unit with an error: no verdict.
// Helm charts, plugins and other repositories are recorded as skipped, and
// argocd-source-not-rendered warns about them.
//
// Without --apps-root, a -k render that holds an Application whose source
// path is the -k directory itself (a self-managed app) is checked against
// the rest of that render. Other Applications next to other resources (app
// of apps) are not: those resources are not what the Applications deploy, so
// they get the not-rendered warning instead of a false verdict.

const maxAppDepth = 5

// appSource is what a unit rendered from an Application source knows.
type appSource struct {
	spec    render.ArgoSource
	field   string   // spec.source or spec.sources[i], of the first Application
	path    string   // as written in the Application
	apps    []string // the Applications (namespace/name) that deploy it
	skipped string
}

// appLink ties an Application unit's AppSource to the unit of its render.
type appLink struct {
	app *unit
	i   int
	src *unit
}

type appRenderer struct {
	o       *options
	remotes []string
	byKey   map[string]*unit
	links   []appLink
	// generated and fluxSources serve generate (generated.go).
	generated   map[string]bool
	fluxSources []*yaml.RNode
}

// attachApps renders the Applications' sources and returns the units with
// one more per distinct source render. A render that fails is a unit with
// an error; the error returned is a usage error (--apps-root is no directory).
func attachApps(ctx context.Context, o *options, units []*unit, progress func(string)) ([]*unit, error) {
	if o.appsRoot == "" {
		for _, u := range units {
			selfManaged(u)
		}
		return units, nil
	}
	if st, err := os.Stat(o.appsRoot); err != nil || !st.IsDir() {
		return nil, usageErr("--apps-root", "%q is not a directory", o.appsRoot)
	}
	a := &appRenderer{o: o, remotes: render.CheckoutURLs(o.appsRoot, o.repoURLs), byKey: map[string]*unit{}}
	level := units
	for depth := 0; depth < maxAppDepth && len(level) > 0; depth++ {
		var fresh []*unit
		for _, u := range level {
			fresh = append(fresh, a.plan(u)...)
		}
		a.render(ctx, fresh, progress)
		generated := a.generate(ctx, level)
		level = level[:0:0]
		for _, u := range fresh {
			if u.source.skipped == "" {
				level = append(level, u)
			}
		}
		level = append(level, generated...)
		units = append(units, level...)
	}
	for _, l := range a.links {
		as := &l.app.apps[l.i]
		as.Resources, as.Err = l.src.resources, l.src.err
		if l.src.source != nil {
			as.Skipped = l.src.source.skipped
		}
	}
	return units, nil
}

// plan lists the sources of the unit's Applications and returns the units
// of the renders not planned before.
func (a *appRenderer) plan(u *unit) []*unit {
	if u.err != nil {
		return nil
	}
	var fresh []*unit
	for _, app := range u.resources {
		if !argo.IsApplication(app) {
			continue
		}
		for _, src := range argo.Sources(app) {
			if !src.Manifests() {
				continue
			}
			as := argo.AppSource{App: app, Index: src.Index, Path: src.Path}
			if why := render.SkipSource(a.o.appsRoot, a.remotes, src); why != "" {
				as.Skipped = why
				u.apps = append(u.apps, as)
				continue
			}
			spec, err := render.LocalSource(a.o.appsRoot, app, src)
			spec.Refs = render.RefRoots(a.o.appsRoot, a.remotes, app)
			as.Path = filepath.ToSlash(spec.Dir)
			u.apps = append(u.apps, as)
			s, isNew := a.unitFor(app, src, spec, err)
			a.links = append(a.links, appLink{app: u, i: len(u.apps) - 1, src: s})
			if isNew {
				fresh = append(fresh, s)
			}
		}
	}
	return fresh
}

// unitFor returns the unit that renders a source, planning it when no
// Application planned the same render before; err (from localSource) makes
// a new unit fail.
func (a *appRenderer) unitFor(app *yaml.RNode, src argo.Source, spec render.ArgoSource, err error) (*unit, bool) {
	key := render.SourceKey(spec)
	name := argo.AppName(app) + " " + src.Field
	if u, ok := a.byKey[key]; ok {
		// An Application reachable twice (listed and a child of an app of
		// apps) is named once.
		if !slices.Contains(u.source.apps, name) {
			u.source.apps = append(u.source.apps, name)
		}
		return u, false
	}
	u := &unit{name: spec.Dir, dir: spec.Dir, err: err, source: &appSource{spec: spec, field: src.PathField(), path: src.Path, apps: []string{name}}}
	a.byKey[key] = u
	return u, true
}

// render renders the planned units concurrently.
func (a *appRenderer) render(ctx context.Context, fresh []*unit, progress func(string)) {
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(4)
	var mu sync.Mutex
	done := 0
	opts := a.o.renderOptions()
	for _, u := range fresh {
		if u.err != nil {
			continue
		}
		g.Go(func() error {
			defer func() {
				if err := recovered(recover()); err != nil {
					u.err = err
				}
			}()
			end := doing(ctx, "rendering Application "+strings.Join(u.source.apps, ", ")+" source "+u.dir)
			renderSource(u, opts)
			end()
			mu.Lock()
			done++
			progress(fmt.Sprintf("rendered %d/%d Application sources", done, len(fresh)))
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
}

func renderSource(u *unit, opts render.Options) {
	s := u.source
	res, err := render.RenderArgo(s.spec, opts)
	var skip *render.SkipError
	switch {
	case errors.As(err, &skip):
		s.skipped = skip.Reason
	case err != nil:
		u.err = fmt.Errorf("Application %s: %s %q: %w", strings.Join(s.apps, ", "), s.field, s.path, err)
	default:
		u.resources, u.placement, u.injected, u.remote = res.Resources, res.Placement, res.Injected, res.Remote
		if obj, ok := res.Config(); ok {
			u.found = obj
		}
	}
}

// finish names the Applications in the findings of a source's render, and
// drops its render-empty when it rendered nothing: argocd-source-empty
// reports that on the Application, once.
func (u *unit) finish(rep *finding.Report, err error) (*finding.Report, error) {
	if err == nil {
		u.finishGenerated(rep)
	}
	if err != nil || u.source == nil {
		return rep, err
	}
	kept := rep.Findings[:0]
	for _, f := range rep.Findings {
		if f.Rule == "render-empty" && rep.Resources == 0 {
			continue
		}
		f.Message += " (source of Application " + strings.Join(u.source.apps, ", ") + ")"
		kept = append(kept, f)
	}
	rep.Findings = kept
	return rep, nil
}

// selfManaged, without --apps-root, takes a -k render as the source of an
// Application in it whose source path is the -k directory itself.
func selfManaged(u *unit) {
	if u.dir == "" || u.err != nil {
		return
	}
	abs, err := filepath.Abs(u.dir)
	if err != nil {
		return
	}
	var rest []*yaml.RNode
	for _, r := range u.resources {
		if !argo.IsArgoConfig(r) {
			rest = append(rest, r)
		}
	}
	for _, app := range u.resources {
		if !argo.IsApplication(app) {
			continue
		}
		for _, src := range argo.Sources(app) {
			p := filepath.Clean(filepath.FromSlash(src.Path))
			plain := src.Chart == "" && !src.Helm && !src.Plugin && src.Kustomize == nil && src.Directory == nil
			if plain && p != "." && (abs == p || strings.HasSuffix(abs, string(filepath.Separator)+p)) {
				u.apps = append(u.apps, argo.AppSource{App: app, Index: src.Index, Path: u.dir, Resources: rest})
			}
		}
	}
}
