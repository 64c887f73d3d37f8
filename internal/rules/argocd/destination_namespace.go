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
	Doc:      "an Application's spec.destination.namespace differs from the namespace its source's namespaced objects render into, or it has none while they have none",
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
		for _, ns := range argo.Namespaces(byNS) {
			objs := byNS[ns]
			switch {
			case ns == "" && dest == "":
				out = append(out, manifest.Finding("argocd-destination-namespace", finding.SeverityError, app, "spec.destination.namespace", nil,
					"has no destination namespace, and %s of its source %s (%s) set no namespace either: Argo CD applies them to whatever namespace its cluster connection defaults to, not a chosen one",
					manifest.Plural(objs.N, "namespaced object"), a.Path, objs.Sample))
			case ns != "" && dest != "" && ns != dest:
				f := manifest.Finding("argocd-destination-namespace", finding.SeverityError, app, "spec.destination.namespace", dest,
					"destination namespace %q, but %s of its source %s render into namespace %q (%s): the sync goes green and nothing lands in %q",
					dest, manifest.Plural(objs.N, "object"), a.Path, ns, objs.Sample, dest)
				if len(byNS) == 1 {
					f.Field.ProposedValue = ns
				}
				out = append(out, f)
			}
		}
	})
	return out
}

// moveDestination points an Application at another namespace than its
// source renders into; when its objects set no namespace (they follow the
// destination), it removes the destination namespace instead.
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
		switch {
		case explicit:
			return setDestination(app, "gate-selftest-elsewhere")
		case bare:
			return setDestination(app, "")
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
