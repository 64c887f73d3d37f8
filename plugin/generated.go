package plugin

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
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/flux"
	"github.com/kubectl-gate/kubectl-gate/internal/helm"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
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

// generatedUnit is what a unit made by a controller knows.
type generatedUnit struct {
	// by names the generator: "ApplicationSet argocd/shop", "Flux
	// Kustomization flux-system/apps".
	by string
	// elements maps a generated Application's name to its generator element.
	elements map[string]string
	// set is the ApplicationSet, for selftest's mutant.
	set *yaml.RNode
}

// generate returns the units the level's ApplicationSets and Flux objects
// generate, each generated once per run.
func (a *appRenderer) generate(ctx context.Context, level []*unit) []*unit {
	if a.generated == nil {
		a.generated = map[string]bool{}
	}
	for _, u := range level {
		for _, r := range u.resources {
			if flux.IsGitRepository(r) {
				a.fluxSources = append(a.fluxSources, r)
			}
		}
	}
	var out []*unit
	for _, u := range level {
		if u.err != nil {
			continue
		}
		for _, r := range u.resources {
			var g *unit
			switch {
			case isApplicationSet(r):
				g = a.expandAppSet(u, r)
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
func (a *appRenderer) once(key string) bool {
	if a.generated[key] {
		return false
	}
	a.generated[key] = true
	return true
}

// isCheckout reports whether a repoURL names the checkout at --apps-root
// (any does when the checkout names no repository).
func (a *appRenderer) isCheckout(url string) bool {
	return len(a.remotes) == 0 || slices.Contains(a.remotes, render.NormalizeRepoURL(url))
}

// expandAppSet makes the unit of an ApplicationSet's Applications.
func (a *appRenderer) expandAppSet(u *unit, set *yaml.RNode) *unit {
	name := "ApplicationSet " + argo.AppName(set)
	if !a.once(name) {
		return nil
	}
	g := &unit{name: name, generated: &generatedUnit{by: name, elements: map[string]string{}, set: set}}
	// Expanded or no verdict: either way argocd-source-not-rendered's
	// "without --apps-root" warning does not apply to it.
	u.expanded = append(u.expanded, set.GetName())
	// The rules see it too (argocd-source-not-rendered skips an
	// ApplicationSet with an entry), in check and in selftest alike.
	u.apps = append(u.apps, argo.AppSource{App: set, Index: -1, Skipped: "expanded: its Applications are checked as their own input"})
	gens, err := appset.Expand(set, appset.Options{Root: a.o.appsRoot, IsCheckout: a.isCheckout})
	if err != nil {
		g.err = fmt.Errorf("%s: %w: no verdict on what it generates", name, err)
		return g
	}
	file := manifest.SourceFile(set)
	for _, gen := range gens {
		if file != nil {
			_ = gen.App.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, file.Path))
		}
		g.resources = append(g.resources, gen.App)
		g.generated.elements[gen.App.GetName()] = gen.Element
	}
	return g
}

// renderFlux makes the unit of a Flux Kustomization's render and links it
// to the Kustomization's unit.
func (a *appRenderer) renderFlux(ctx context.Context, u *unit, ks *yaml.RNode) *unit {
	name := "Flux " + flux.Name(ks)
	if !a.once(name) {
		rendered(u, ks)
		return nil
	}
	g := &unit{name: name, generated: &generatedUnit{by: name}}
	ref := flux.KustomizationSource(ks)
	src := flux.FindSource(ref, a.fluxSources)
	switch {
	case ref.Kind != "GitRepository":
		g.err = fmt.Errorf("%s: its source is %s %s/%s: the gate renders Flux Kustomizations from the git checkout only: no verdict", name, ref.Kind, ref.Namespace, ref.Name)
	case src == nil:
		g.err = fmt.Errorf("%s: its source GitRepository %s/%s is not in the input, so the gate cannot tell whether it is the checkout at %s: no verdict", name, ref.Namespace, ref.Name, a.o.appsRoot)
	case !a.isCheckout(yamlString(src, "spec", "url")):
		g.err = fmt.Errorf("%s: GitRepository %s/%s (%s) is not the repository checked out at %s: no verdict", name, ref.Namespace, ref.Name, yamlString(src, "spec", "url"), a.o.appsRoot)
	default:
		end := doing(ctx, "rendering "+name)
		g.resources, g.err = a.fluxRender(name, ks, u)
		end()
	}
	u.apps = append(u.apps, argo.AppSource{App: ks, Index: -1, Path: yamlString(ks, "spec", "path")})
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
func (a *appRenderer) helmRelease(ctx context.Context, u *unit, hr *yaml.RNode) *unit {
	name := "Flux " + flux.Name(hr)
	if !a.once(name) {
		rendered(u, hr)
		return nil
	}
	g := &unit{name: name, generated: &generatedUnit{by: name}}
	chart := yamlString(hr, "spec", "chart", "spec", "chart")
	ref := flux.SourceRef{Kind: yamlString(hr, "spec", "chart", "spec", "sourceRef", "kind"), Name: yamlString(hr, "spec", "chart", "spec", "sourceRef", "name"),
		Namespace: yamlString(hr, "spec", "chart", "spec", "sourceRef", "namespace")}
	if ref.Namespace == "" {
		ref.Namespace = hr.GetNamespace()
	}
	src := flux.FindSource(ref, a.fluxSources)
	unsupported := ""
	for _, f := range [][]string{{"spec", "chartRef"}, {"spec", "valuesFrom"}, {"spec", "chart", "spec", "valuesFiles"}, {"spec", "postRenderers"}} {
		if n, _ := hr.Pipe(yaml.Lookup(f...)); n != nil && unsupported == "" {
			unsupported = strings.Join(f, ".")
		}
	}
	switch {
	case unsupported != "":
		g.err = fmt.Errorf("%s: chart %s: %s is not rendered by the gate: no verdict", name, chart, unsupported)
	case ref.Kind != "GitRepository":
		g.err = fmt.Errorf("%s: chart %s comes from %s %s/%s, not the checkout: no verdict", name, chart, ref.Kind, ref.Namespace, ref.Name)
	case src == nil || !a.isCheckout(yamlString(src, "spec", "url")):
		g.err = fmt.Errorf("%s: chart %s: its GitRepository %s/%s is not in the input or not the checkout at %s: no verdict", name, chart, ref.Namespace, ref.Name, a.o.appsRoot)
	default:
		g.resources, g.err = a.renderRelease(ctx, hr, chart)
		if g.err != nil {
			g.err = fmt.Errorf("%s: chart %s: %w", name, chart, g.err)
		}
	}
	u.apps = append(u.apps, argo.AppSource{App: hr, Index: -1, Path: chart})
	a.links = append(a.links, appLink{app: u, i: len(u.apps) - 1, src: g})
	return g
}

// renderRelease renders a HelmRelease's chart directory from the checkout.
func (a *appRenderer) renderRelease(ctx context.Context, hr *yaml.RNode, chart string) ([]*yaml.RNode, error) {
	rel := filepath.Clean(filepath.FromSlash(strings.TrimPrefix(chart, "/")))
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("the chart path leaves the repository")
	}
	target := yamlString(hr, "spec", "targetNamespace")
	o := helm.Options{ReleaseName: yamlString(hr, "spec", "releaseName"), Namespace: target, IncludeCRDs: true}
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
	return helm.Render(ctx, filepath.Join(a.o.appsRoot, rel), filepath.ToSlash(rel), o)
}

// rendered records on u that a Flux object was handled elsewhere (rendered
// from its first copy, or no verdict): flux-not-rendered then stays quiet
// about this copy, and the flux rules judge only the first.
func rendered(u *unit, obj *yaml.RNode) {
	u.apps = append(u.apps, argo.AppSource{App: obj, Index: -1, Skipped: "handled with its first copy"})
}

func yamlString(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		return ""
	}
	return yaml.GetValue(v)
}

// finishGenerated names the generator in the findings of a generated unit
// and drops, on the unit that holds an expanded ApplicationSet, the
// warning that it was not expanded.
func (u *unit) finishGenerated(rep *finding.Report) {
	kept := rep.Findings[:0]
	for _, f := range rep.Findings {
		if f.Rule == "argocd-source-not-rendered" && f.ResourceRef != nil && f.ResourceRef.Kind == "ApplicationSet" && slices.Contains(u.expanded, f.ResourceRef.Name) {
			continue
		}
		if g := u.generated; g != nil {
			if f.Rule == "render-empty" && g.set != nil {
				f.Message = g.by + " generates no Application: Argo CD creates nothing, and deletes the Applications it generated before"
				kept = append(kept, f)
				continue
			}
			if el, ok := g.elements[refName(f.ResourceRef)]; ok && f.ResourceRef.Kind == "Application" {
				f.Message += " (generated by " + g.by + " from " + el + ")"
			} else {
				f.Message += " (rendered by " + g.by + ")"
			}
		}
		kept = append(kept, f)
	}
	rep.Findings = kept
}

func refName(r *finding.ResourceRef) string {
	if r == nil {
		return ""
	}
	return r.Name
}

// fluxRender renders a Flux Kustomization from the checkout; with
// --no-remote its path's kustomizations must name no remote resource.
func (a *appRenderer) fluxRender(name string, ks *yaml.RNode, u *unit) ([]*yaml.RNode, error) {
	if a.o.noRemote {
		dir := filepath.Join(a.o.appsRoot, filepath.FromSlash(yamlString(ks, "spec", "path")))
		refs, err := render.RemoteRefs(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: looking for remote resources: %w", name, err)
		}
		if len(refs) > 0 {
			return nil, fmt.Errorf("%s: %w", name, &render.RemoteError{Dir: dir, Refs: refs})
		}
	}
	return flux.Render(ks, a.o.appsRoot, u.resources)
}
