package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/appset"
	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/flux"
	"github.com/kubectl-gate/kubectl-gate/internal/helm"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// What the controllers generate, with --apps-root (issue 13): every
// ApplicationSet is expanded against the checkout and its Applications
// become a unit of their own, checked like written ones (their sources are
// rendered on the next level, app of apps style); every Flux
// Kustomization whose GitRepository is the checkout is rendered as
// kustomize-controller would, its render a unit of its own and the
// Kustomization's unit getting that render for the flux rules. Findings
// on a generated Application name the generator element; findings in a
// Flux render name the Kustomization. What cannot be generated here (a
// generator needing a cluster or an SCM, another repository, variables
// from the cluster, a HelmRelease whose chart is not a directory of the
// checkout) is a unit with an error: no verdict.

// generate returns the units the level's ApplicationSets and Flux objects
// generate, each generated once per run.
func (a *expander) generate(ctx context.Context, level []*Unit) []*Unit {
	if a.generated == nil {
		a.generated = map[string]bool{}
	}
	for _, u := range level {
		for _, r := range u.Resources {
			if flux.IsGitRepository(r) {
				a.fluxSources = append(a.fluxSources, r)
			}
		}
	}
	var out []*Unit
	for _, u := range level {
		if u.Err != nil {
			continue
		}
		for _, r := range u.Resources {
			if a.excluded(r) {
				// Taken out of scope by the caller: not generated, not
				// fetched; the not-rendered rules list it.
				continue
			}
			var g *Unit
			switch {
			case isApplicationSet(r):
				g = a.expandAppSet(ctx, u, r)
			case flux.IsKustomization(r):
				g = a.renderFlux(ctx, u, r)
			case flux.IsHelmRelease(r):
				g = a.helmRelease(ctx, u, r)
			}
			if g != nil {
				out = append(out, g)
			}
		}
	}
	return out
}

func isApplicationSet(r *yaml.RNode) bool {
	return strings.HasPrefix(r.GetApiVersion(), "argoproj.io/") && r.GetKind() == "ApplicationSet"
}

// once reports whether key is new this run.
func (a *expander) once(key string) bool {
	if a.generated[key] {
		return false
	}
	a.generated[key] = true
	return true
}

// isCheckout reports whether a repoURL names the checkout at --apps-root;
// when the checkout names no repository, the first one asked about is
// taken for it (adopt) and the info line kept in note.
func (a *expander) isCheckout(url string, note *string) bool {
	if n := a.adopt(url); n != "" && note != nil {
		*note = n
	}
	return len(a.remotes) == 0 || slices.Contains(a.remotes, render.NormalizeRepoURL(url))
}

// expandAppSet makes the unit of an ApplicationSet's Applications.
func (a *expander) expandAppSet(ctx context.Context, u *Unit, set *yaml.RNode) *Unit {
	name := "ApplicationSet " + argo.AppName(set)
	if !a.once(name) {
		return nil
	}
	src := &ApplicationSet{Name: name, elements: map[string]string{}, set: set}
	g := &Unit{Source: src}
	// Expanded or no verdict: either way argocd-source-not-rendered's
	// "without --apps-root" warning does not apply to it.
	u.expanded = append(u.expanded, set.GetName())
	// The rules see it too (argocd-source-not-rendered skips an
	// ApplicationSet with an entry), in check and in selftest alike.
	u.apps = append(u.apps, argo.AppSource{App: set, Index: -1, Skipped: "expanded: its Applications are checked as their own input"})
	note := &u.apps[len(u.apps)-1].Assumed
	revision := func(rev string) (string, string) {
		at := a.s.revs.argo(ctx, rev)
		if at.Assumed != "" && *note == "" {
			*note = at.Assumed
		}
		return at.Root, at.Why
	}
	gens, err := appset.Expand(set, appset.Options{Root: a.s.in.AppsRoot, IsCheckout: func(url string) bool { return a.isCheckout(url, note) }, Revision: revision, MaxFileBytes: a.s.o.Render.MaxInputBytes})
	if err != nil {
		g.Err = fmt.Errorf("%s: %w: no verdict on what it generates", name, err)
		return g
	}
	file := manifest.SourceFile(set)
	for _, gen := range gens {
		if file != nil {
			_ = gen.App.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, file.Path))
		}
		g.Resources = append(g.Resources, gen.App)
		src.elements[gen.App.GetName()] = gen.Element
	}
	return g
}

// renderFlux makes the unit of a Flux Kustomization's render and links it
// to the Kustomization's unit.
func (a *expander) renderFlux(ctx context.Context, u *Unit, ks *yaml.RNode) *Unit {
	name := "Flux " + flux.Name(ks)
	if !a.once(name) {
		handledElsewhere(u, ks)
		return nil
	}
	g := &Unit{Source: &FluxKustomization{Name: name}}
	ref := flux.KustomizationSource(ks)
	src := flux.FindSource(ref, a.fluxSources)
	note := ""
	switch {
	case ref.Kind != "GitRepository":
		g.Err = fmt.Errorf("%s: its source is %s %s/%s: the gate renders Flux Kustomizations from the git checkout only: no verdict", name, ref.Kind, ref.Namespace, ref.Name)
	case src == nil:
		g.Err = fmt.Errorf("%s: its source GitRepository %s/%s is not in the input, so the gate cannot tell whether it is the checkout at %s: no verdict", name, ref.Namespace, ref.Name, a.s.in.AppsRoot)
	case !a.isCheckout(yamlString(src, "spec", "url"), &note):
		g.Err = fmt.Errorf("%s: %s: no verdict", name, a.skipWhy(fmt.Sprintf("GitRepository %s/%s (%s) is not the repository checked out at %s", ref.Namespace, ref.Name, yamlString(src, "spec", "url"), a.s.in.AppsRoot)))
	default:
		at := a.s.revs.flux(ctx, src)
		note = joinNotes(note, at.Assumed)
		if at.Why != "" {
			// flux-not-rendered: no verdict unless excluded.
			u.apps = append(u.apps, argo.AppSource{App: ks, Index: -1, Path: yamlString(ks, "spec", "path"), Assumed: note,
				Unrendered: fmt.Sprintf("GitRepository %s/%s: %s", ref.Namespace, ref.Name, at.Why)})
			return nil
		}
		end := stop.Doing(ctx, "rendering "+name)
		g.Resources, g.injected, g.Err = a.fluxRender(name, ks, u, at.Root)
		end()
		if at.Label != "" {
			g.revRoot, g.root = at.Root, a.s.in.AppsRoot
			g.unrevErr()
		}
	}
	u.apps = append(u.apps, argo.AppSource{App: ks, Index: -1, Path: yamlString(ks, "spec", "path"), Assumed: note})
	a.links = append(a.links, appLink{app: u, i: len(u.apps) - 1, src: g})
	return g
}

// helmRelease renders a HelmRelease whose chart is a path in the checkout
// (sourceRef: the checkout's GitRepository) as helm-controller does: the
// chart directory through internal/helm, release name spec.releaseName
// else [targetNamespace-]name, namespace spec.targetNamespace else the
// HelmRelease's, spec.values, CRDs included (install.crds defaults to
// Create). What it cannot render faithfully here (chartRef, a HelmRepository
// or OCI chart, valuesFrom, chart valuesFiles, postRenderers) is no verdict,
// naming the chart.
func (a *expander) helmRelease(ctx context.Context, u *Unit, hr *yaml.RNode) *Unit {
	name := "Flux " + flux.Name(hr)
	if !a.once(name) {
		handledElsewhere(u, hr)
		return nil
	}
	g := &Unit{Source: &HelmRelease{Name: name}}
	chart := yamlString(hr, "spec", "chart", "spec", "chart")
	ref := flux.SourceRef{Kind: yamlString(hr, "spec", "chart", "spec", "sourceRef", "kind"), Name: yamlString(hr, "spec", "chart", "spec", "sourceRef", "name"),
		Namespace: yamlString(hr, "spec", "chart", "spec", "sourceRef", "namespace")}
	if ref.Namespace == "" {
		ref.Namespace = hr.GetNamespace()
	}
	src := flux.FindSource(ref, a.fluxSources)
	note := ""
	unsupported := ""
	for _, f := range [][]string{{"spec", "chartRef"}, {"spec", "valuesFrom"}, {"spec", "chart", "spec", "valuesFiles"}, {"spec", "postRenderers"}} {
		if n, _ := hr.Pipe(yaml.Lookup(f...)); n != nil && unsupported == "" {
			unsupported = strings.Join(f, ".")
		}
	}
	switch {
	case unsupported != "":
		g.Err = fmt.Errorf("%s: chart %s: %s is not rendered by the gate: no verdict", name, chart, unsupported)
	case ref.Kind != "GitRepository":
		g.Err = fmt.Errorf("%s: chart %s comes from %s %s/%s, not the checkout: no verdict", name, chart, ref.Kind, ref.Namespace, ref.Name)
	case src == nil || !a.isCheckout(yamlString(src, "spec", "url"), &note):
		g.Err = fmt.Errorf("%s: chart %s: %s: no verdict", name, chart, a.skipWhy(fmt.Sprintf("its GitRepository %s/%s is not in the input or not the checkout at %s", ref.Namespace, ref.Name, a.s.in.AppsRoot)))
	default:
		at := a.s.revs.flux(ctx, src)
		note = joinNotes(note, at.Assumed)
		if at.Why != "" {
			u.apps = append(u.apps, argo.AppSource{App: hr, Index: -1, Path: chart, Assumed: note,
				Unrendered: fmt.Sprintf("chart %s: GitRepository %s/%s: %s", chart, ref.Namespace, ref.Name, at.Why)})
			return nil
		}
		g.Resources, g.Err = a.renderRelease(ctx, hr, chart, at.Root)
		if at.Label != "" {
			g.revRoot, g.root = at.Root, a.s.in.AppsRoot
			g.unrevErr()
		}
		if g.Err != nil {
			g.Err = fmt.Errorf("%s: chart %s: %w", name, chart, g.Err)
		}
	}
	u.apps = append(u.apps, argo.AppSource{App: hr, Index: -1, Path: chart, Assumed: note})
	a.links = append(a.links, appLink{app: u, i: len(u.apps) - 1, src: g})
	return g
}

// renderRelease renders a HelmRelease's chart directory from the checkout.
func (a *expander) renderRelease(ctx context.Context, hr *yaml.RNode, chart, root string) ([]*yaml.RNode, error) {
	rel := filepath.Clean(filepath.FromSlash(strings.TrimPrefix(chart, "/")))
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("the chart path leaves the repository")
	}
	target := yamlString(hr, "spec", "targetNamespace")
	o := helm.Options{ReleaseName: yamlString(hr, "spec", "releaseName"), Namespace: target, IncludeCRDs: true,
		Root: root, MaxFileBytes: a.s.o.Render.MaxInputBytes}
	if o.ReleaseName == "" {
		o.ReleaseName = hr.GetName()
		if target != "" {
			o.ReleaseName = target + "-" + hr.GetName()
		}
	}
	if len(o.ReleaseName) > 53 {
		return nil, fmt.Errorf("release name %q is longer than 53 characters: helm-controller shortens it with a hash the gate does not compute: no verdict", o.ReleaseName)
	}
	if o.Namespace == "" {
		o.Namespace = hr.GetNamespace()
	}
	if v, _ := hr.Pipe(yaml.Lookup("spec", "values")); v != nil {
		o.InlineValues = [][]byte{[]byte(v.MustString())}
	}
	return helm.Render(ctx, filepath.Join(root, rel), filepath.ToSlash(rel), o)
}

// handledElsewhere records on u that a Flux object was handled elsewhere (rendered
// from its first copy, or no verdict): flux-not-rendered then stays quiet
// about this copy, and the flux rules judge only the first.
func handledElsewhere(u *Unit, obj *yaml.RNode) {
	u.apps = append(u.apps, argo.AppSource{App: obj, Index: -1, Skipped: "handled with its first copy"})
}

func yamlString(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		return ""
	}
	return yaml.GetValue(v)
}

// fluxRender renders a Flux Kustomization from the checkout; with
// --no-remote its path's kustomizations must name no remote resource,
// and in every mode no file:// repository. Origin and transformer
// annotations are switched on (injected), as for -k: a finding names the
// file and line its object and value came from, the directory of the
// render alone otherwise.
func (a *expander) fluxRender(name string, ks *yaml.RNode, u *Unit, root string) ([]*yaml.RNode, bool, error) {
	dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(yamlString(ks, "spec", "path"), "/")))
	refs, err := render.RemoteRefs(dir, root)
	switch {
	case a.s.o.Render.NoRemote && err != nil:
		return nil, false, fmt.Errorf("%s: looking for remote resources: %w", name, err)
	case a.s.o.Render.NoRemote && len(refs) > 0:
		return nil, false, fmt.Errorf("%s: %w", name, &render.RemoteError{Dir: dir, Refs: refs})
	}
	// A file:// base is a read of this machine outside the checkout.
	if err := render.CheckFileRemotes(refs); err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	objs, injected, err := flux.Traced(ks, root, u.Resources, a.s.o.Render.MaxInputBytes)
	if injected {
		render.Relativize(objs, filepath.Clean(dir))
	}
	return objs, injected, err
}

// joinNotes joins two info lines, either of which may be empty.
func joinNotes(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}
