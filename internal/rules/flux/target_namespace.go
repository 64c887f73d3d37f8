package flux

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// TargetNamespace fires when a Flux Kustomization's targetNamespace is not
// where its render's namespaced objects land, or it has none while they
// set none: kustomize-controller then cannot apply them (fluxcd/flux2#4301,
// "namespace not specified").
var TargetNamespace = rules.Rule{
	ID: "flux-target-namespace", Default: finding.SeverityError, Family: "flux",
	Doc:      "a Flux Kustomization's spec.targetNamespace differs from the namespace its path's namespaced objects render into, or it has none while they set none",
	Outage:   "kustomize-controller fails the whole apply (\"namespace not specified\", fluxcd/flux2#4301), or the objects land outside the namespace the Kustomization names",
	Fix:      "set spec.targetNamespace to the namespace the path's objects render into, or give those objects a namespace",
	Mutation: "change the targetNamespace",
	Reads:    reads,
	Check:    checkTargetNamespace,
	Mutants: []rules.Mutant{
		{Name: "change the targetNamespace", Apply: moveTarget, NeedsApps: true},
	},
}

// IsKustomization reports whether r is a Flux Kustomization.
func IsKustomization(r *yaml.RNode) bool {
	return strings.HasPrefix(manifest.APIVersion(r), "kustomize.toolkit.fluxcd.io/") && manifest.Kind(r) == "Kustomization"
}

// eachRendered calls fn for every Flux Kustomization of the input whose
// path was rendered.
func eachRendered(c *rules.Context, fn func(ks *yaml.RNode, a argo.AppSource)) {
	for _, ks := range c.Resources {
		if !IsKustomization(ks) {
			continue
		}
		if a, ok := argo.RendersOf(c.Apps, ks)[-1]; ok && a.Err == nil && a.Skipped == "" {
			fn(ks, a)
		}
	}
}

func checkTargetNamespace(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	eachRendered(c, func(ks *yaml.RNode, a argo.AppSource) {
		target := manifest.Str(ks, "spec.targetNamespace")
		byNS := a.Namespaces(true)
		for _, ns := range argo.Namespaces(byNS) {
			objs := byNS[ns]
			switch {
			case ns == "" && target == "":
				out = append(out, manifest.Finding("flux-target-namespace", finding.SeverityError, ks, "spec.targetNamespace", nil,
					"has no targetNamespace, and %s of its path %s (%s) set no namespace either: kustomize-controller does not default them, the apply fails with \"namespace not specified\" and nothing of the Kustomization is applied",
					manifest.Plural(objs.N, "namespaced object"), a.Path, objs.Sample))
			case ns != "" && target != "" && ns != target:
				f := manifest.Finding("flux-target-namespace", finding.SeverityError, ks, "spec.targetNamespace", target,
					"targetNamespace %q, but %s of its path %s render into namespace %q (%s)", target, manifest.Plural(objs.N, "object"), a.Path, ns, objs.Sample)
				if len(byNS) == 1 {
					f.Field.ProposedValue = ns
				}
				out = append(out, f)
			}
		}
	})
	return out
}

// moveTarget points a rendered Kustomization's targetNamespace elsewhere,
// or removes it when its objects set no namespace of their own.
func moveTarget(s *rules.Subject) bool {
	for _, ks := range s.Resources {
		if !IsKustomization(ks) {
			continue
		}
		a, ok := argo.RendersOf(s.Apps, ks)[-1]
		if !ok || a.Err != nil || a.Skipped != "" {
			continue
		}
		for ns := range argo.ByNamespace(a.Resources, isFlux) {
			spec, err := ks.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec"))
			if err != nil {
				return false
			}
			if ns == "" {
				return spec.PipeE(yaml.Clear("targetNamespace")) == nil
			}
			return spec.PipeE(yaml.SetField("targetNamespace", yaml.NewStringRNode("gate-selftest-elsewhere"))) == nil
		}
	}
	return false
}

// isFlux reports Flux's own objects: a Kustomization that renders other
// Kustomizations puts them in flux-system on purpose.
func isFlux(r *yaml.RNode) bool { return argo.IsFluxObject(r) }
