package argocd

import (
	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DestinationNamespace fires when an Application's destination namespace is not where its source renders.
var DestinationNamespace = rules.Rule{
	ID: "argocd-destination-namespace", Default: finding.SeverityError, Family: "argocd",
	Doc:      "none of the namespaced objects a source of an Application renders lands in its spec.destination.namespace: each names another namespace (written, a kustomize namespace:, a chart's own), so the destination's namespace gets nothing of it; or the Application has no destination namespace while some of them set none. A source whose objects land in the destination while some name another namespace gets a warning naming them (deliberate, as a RoleBinding in kube-system, or an app written for another namespace)",
	Outage:   "the sync goes green and nothing lands where expected (argo-cd#2280)",
	Fix:      "set spec.destination.namespace to the namespace the source's objects render into (or set their namespace in the source)",
	Mutation: "change the destination namespace",
	Reads:    reads,
	Check:    checkDestinationNamespace,
	Mutants: []rules.Mutant{
		{Name: "change the destination namespace", Apply: moveDestination, NeedsApps: true},
	},
}

func checkDestinationNamespace(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	eachRendered(c, func(app *yaml.RNode, src argo.Source, a argo.AppSource) {
		dest := manifest.Str(app, "spec.destination.namespace")
		byNS := a.Namespaces(false)
		if bare, ok := byNS[""]; ok && dest == "" {
			out = append(out, manifest.Finding("argocd-destination-namespace", finding.SeverityError, app, "spec.destination.namespace", nil,
				"has no destination namespace, and %s of its source %s (%s) set no namespace either: Argo CD applies them to whatever namespace its cluster connection defaults to, not a chosen one",
				manifest.Plural(bare.N, "namespaced object"), a.Path, bare.Sample))
			return
		}
		// Objects that set no namespace land in the destination, and so do
		// those that name it: a source with some deliberately elsewhere (a
		// RoleBinding in kube-system) deploys where its Application says.
		// Only a source none of whose namespaced objects land there (each
		// names another namespace, as a kustomize namespace: or a chart's
		// own does) leaves the destination empty.
		if dest == "" {
			return
		}
		others := argo.Namespaces(byNS)
		if bare, ok := byNS[""]; ok || byNS[dest].N > 0 {
			// Some land in the destination, others name another
			// namespace: deliberate (a RoleBinding in kube-system) or an
			// app written for another namespace that only partly
			// follows the destination. A warning names them; it does
			// not fail the deploy.
			here := byNS[dest].N + bare.N
			for _, ns := range others {
				if ns == "" || ns == dest {
					continue
				}
				objs := byNS[ns]
				out = append(out, manifest.Finding("argocd-destination-namespace", finding.SeverityWarning, app, "spec.destination.namespace", dest,
					"destination namespace %q, but %s of its source %s render into namespace %q (%s) while %s land in %q: if they belong there by design (a RoleBinding in kube-system), this is expected; otherwise the source was written for another namespace",
					dest, manifest.Plural(objs.N, "object"), a.Path, ns, objs.Sample, manifest.Plural(here, "namespaced object"), dest))
			}
			return
		}
		for _, ns := range others {
			objs := byNS[ns]
			f := manifest.Finding("argocd-destination-namespace", finding.SeverityError, app, "spec.destination.namespace", dest,
				"destination namespace %q, but %s of its source %s render into namespace %q (%s) and none of its namespaced objects into %q: the sync goes green and nothing of it lands in %q",
				dest, manifest.Plural(objs.N, "object"), a.Path, ns, objs.Sample, dest, dest)
			if len(others) == 1 {
				f.Field.ProposedValue = ns
			}
			out = append(out, f)
		}
	})
	return out
}

// moveDestination points an Application at another namespace than its
// source renders into; when some of its objects set no namespace (they
// follow the destination), it removes the destination namespace instead.
func moveDestination(s *rules.Subject) bool {
	apps := s.Apps
	return rendered(s.Resources, apps, func(app *yaml.RNode, i int) bool {
		explicit, bare := false, false
		scope := argo.NewScopeOf(apps[i].Resources) // once: per object it was quadratic
		for _, obj := range apps[i].Resources {
			if scope.Namespaced(obj) {
				explicit = explicit || obj.GetNamespace() != ""
				bare = bare || obj.GetNamespace() == ""
			}
		}
		// Objects that set no namespace land in any destination: only
		// none makes them go nowhere chosen.
		switch {
		case bare:
			return setDestination(app, "")
		case explicit:
			return setDestination(app, "gate-selftest-elsewhere")
		}
		return false
	})
}
func setDestination(app *yaml.RNode, ns string) bool {
	dest, err := app.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec", "destination"))
	if err != nil {
		return false
	}
	if ns == "" {
		return dest.PipeE(yaml.Clear("namespace")) == nil
	}
	return dest.PipeE(yaml.SetField("namespace", yaml.NewStringRNode(ns))) == nil
}
