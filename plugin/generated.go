package plugin

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/appset"
	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/flux"
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
// from the cluster, a HelmRelease) is a unit with an error: no verdict.

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
func (a *appRenderer) generate(level []*unit) []*unit {
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
				g = a.renderFlux(u, r)
			case flux.IsHelmRelease(r):
				g = a.helmRelease(u, r)
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
func (a *appRenderer) renderFlux(u *unit, ks *yaml.RNode) *unit {
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
		g.resources, g.err = flux.Render(ks, a.o.appsRoot, u.resources)
	}
	u.apps = append(u.apps, argo.AppSource{App: ks, Index: -1, Path: yamlString(ks, "spec", "path")})
	a.links = append(a.links, appLink{app: u, i: len(u.apps) - 1, src: g})
	return g
}

// helmRelease: a HelmRelease is not rendered yet (issue 13 §3: the Helm
// renderer is another part of the work); it is no verdict, naming the chart.
func (a *appRenderer) helmRelease(u *unit, hr *yaml.RNode) *unit {
	name := "Flux " + flux.Name(hr)
	rendered(u, hr)
	if !a.once(name) {
		return nil
	}
	chart := yamlString(hr, "spec", "chart", "spec", "chart")
	if chart == "" {
		chart = "chartRef " + yamlString(hr, "spec", "chartRef", "kind") + "/" + yamlString(hr, "spec", "chartRef", "name")
	}
	return &unit{name: name, err: fmt.Errorf("%s: chart %s is not rendered: the gate does not render HelmReleases: no verdict", name, chart)}
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
