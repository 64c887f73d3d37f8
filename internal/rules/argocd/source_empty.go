package argocd

import (
	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SourceEmpty fires when an Application's local source renders nothing.
var SourceEmpty = rules.Rule{
	ID: "argocd-source-empty", Default: finding.SeverityError, Family: "argocd",
	Doc:      "an Application's local source renders zero objects",
	Outage:   "an Application with nothing to manage syncs green (and, with prune, deletes what it ran)",
	Fix:      "fix the source path, or remove the Application if it has nothing to deploy",
	Mutation: "empty an Application's source",
	Reads:    reads,
	Check:    checkSourceEmpty,
	Mutants: []rules.Mutant{
		{Name: "empty an Application's source", Apply: emptySource, NeedsApps: true},
	},
}

func checkSourceEmpty(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	eachRendered(c, func(app *yaml.RNode, src argo.Source, a argo.AppSource) {
		if a.Count() > 0 {
			return
		}
		out = append(out, manifest.Finding("argocd-source-empty", finding.SeverityError, app, src.PathField(), src.Path,
			"its source %s renders zero objects: Argo CD syncs it green with nothing to manage (and with prune: true deletes what it ran)", a.Path))
	})
	return out
}

// emptySource replaces the render of the first source that renders
// something with an empty render.
func emptySource(s *rules.Subject) bool {
	apps := s.Apps
	return rendered(s.Resources, apps, func(_ *yaml.RNode, i int) bool {
		if manifest.Count(apps[i].Resources) == 0 {
			return false
		}
		apps[i].Resources = []*yaml.RNode{}
		return true
	})
}
