package argocd

import (
	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// eachRendered calls fn for every Application of the input and every render
// of its sources.
func eachRendered(c *rules.Context, fn func(app *yaml.RNode, src argo.Source, a argo.AppSource)) {
	for _, app := range c.Resources {
		if !argo.IsApplication(app) {
			continue
		}
		renders := appRenders(c).Of(app)
		for _, src := range argo.Sources(app) {
			if a, ok := renders[src.Index]; ok && a.Judged() {
				fn(app, src, a)
			}
		}
	}
}

// rendered calls fn with each Application of the input and each render of
// its sources that the argocd rules judge, until fn returns true (selftest).
func rendered(resources []*yaml.RNode, apps []argo.AppSource, fn func(app *yaml.RNode, i int) bool) bool {
	for _, app := range resources {
		if !argo.IsApplication(app) {
			continue
		}
		for _, src := range argo.Sources(app) {
			for i, a := range apps {
				same := a.App.GetName() == app.GetName() && a.App.GetNamespace() == app.GetNamespace()
				if same && a.Index == src.Index && a.Judged() && fn(app, i) {
					return true
				}
			}
		}
	}
	return false
}

// appRenders indexes the renders of the Applications' sources once per run.
func appRenders(c *rules.Context) argo.Renders {
	return rules.Memo(c, "argocd-app-renders", func() argo.Renders { return argo.IndexRenders(c.Apps) })
}

// reads are the kinds the Argo CD rules read beyond metadata (Rule.Reads):
// Argo CD's own objects, argocd-operator's ArgoCD and the argocd-cm
// ConfigMap, which hold ignoreDifferences.
var reads = []string{"Application", "ApplicationSet", "AppProject", "ArgoCD", "ConfigMap/argocd-cm"}
