package argocd

import (
	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// SharedObject fires when two owners (Argo CD Applications, Flux
// Kustomizations or HelmReleases) render the same object for the same
// cluster.
var SharedObject = rules.Rule{
	ID: "app-shared-object", Default: finding.SeverityError, Family: "argocd",
	Doc:    "two Applications or Flux Kustomizations/HelmReleases for the same destination cluster render the same object (group, kind, namespace with the destination namespace applied, name): an error naming both owners and sources; a warning when both renders of it are identical as the cluster receives them (values compared, not text: key order, quoting, the namespace written or set by the destination or a kustomize namespace:, and the build's origin and transformations annotations do not count)",
	Outage: "each sync overwrites the other owner's version (Argo CD's SharedResourceWarning), so the object flips between two contents and pruning one app deletes what the other runs",
	Fix:    "give the object one owner: remove it from one of the two sources, or split it into two objects with different names or namespaces",
	Reads:  reads,
	Check:  checkSharedObject,
}

func checkSharedObject(c *rules.Context) []finding.Finding {
	// The run's index over every unit (two Applications in two renders
	// deploy to one cluster all the same); a render checked alone (the KRM
	// function, selftest) indexes its own Applications.
	own, unit := c.Shared, c.Unit
	if own == nil {
		own, unit = argo.NewOwnership([][]argo.AppSource{c.Apps}), 0
	}
	var out []finding.Finding
	done := map[string]bool{}
	argo.EachOwned(c.Apps, func(o argo.Owned) {
		prevOwner, prevSource, identical, ok := own.Shared(unit, o)
		id := o.Key + "\x00" + o.Owner + "\x00" + o.Source
		if !ok || done[id] {
			return
		}
		done[id] = true
		if identical {
			out = append(out, manifest.Finding("app-shared-object", finding.SeverityWarning, o.App, "", o.What,
				"%s is rendered identically by %s (%s) and %s (%s) for cluster %s: both apps own it, and pruning or deleting either removes what the other deploys", o.What, prevOwner, prevSource, o.Owner, o.Source, o.Cluster))
			return
		}
		out = append(out, manifest.Finding("app-shared-object", finding.SeverityError, o.App, "", o.What,
			"%s is rendered by both %s (%s) and %s (%s) for cluster %s, with different content: each sync overwrites the other (SharedResourceWarning); keep it in one of them", o.What, prevOwner, prevSource, o.Owner, o.Source, o.Cluster))
	})
	return out
}
