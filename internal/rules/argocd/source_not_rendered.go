package argocd

import (
	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SourceNotRendered says which Applications' sources the gate did not see.
var SourceNotRendered = rules.Rule{
	ID: "argocd-source-not-rendered", Default: finding.SeverityWarning, Family: "argocd",
	Doc:    "an Application's source was not rendered, so nothing it deploys was checked: a Helm chart, a plugin, another repository, an ApplicationSet, or no --apps-root",
	Outage: "a green gate over an Application whose manifests nobody looked at",
	Check:  checkSourceNotRendered,
}

func checkSourceNotRendered(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, r := range c.Resources {
		switch {
		case argo.Is(r, "ApplicationSet"):
			out = append(out, manifest.Finding("argocd-source-not-rendered", finding.SeverityWarning, r, "spec.generators", nil,
				"ApplicationSet %s generates its Applications at run time: without --apps-root the gate does not expand its generators, so what they deploy was not checked; run `kubectl gate check --apps-root DIR` on a checkout of the repository", manifest.Name(r)))
		case argo.IsApplication(r):
			out = append(out, notRendered(c, r)...)
		}
	}
	return out
}
func notRendered(c *rules.Context, app *yaml.RNode) []finding.Finding {
	srcs := argo.Sources(app)
	if len(srcs) == 0 {
		why := "has no spec.source or spec.sources"
		if app.Field("spec") != nil && manifest.Str(app, "spec.sourceHydrator.drySource.repoURL") != "" {
			why = "uses spec.sourceHydrator, which the gate does not render"
		}
		return []finding.Finding{manifest.Finding("argocd-source-not-rendered", finding.SeverityWarning, app, "spec", nil, "%s: what it deploys was not checked", why)}
	}
	renders := argo.RendersOf(c.Apps, app)
	var out []finding.Finding
	for _, src := range srcs {
		if !src.Manifests() {
			continue
		}
		a, ok := renders[src.Index]
		switch {
		case !ok:
			out = append(out, manifest.Finding("argocd-source-not-rendered", finding.SeverityWarning, app, src.Field, src.Path,
				"this source (%s) was not rendered, so what it deploys was not checked; run `kubectl gate check --apps-root DIR` on a checkout of its repository", describe(src)))
		case a.Skipped != "":
			out = append(out, manifest.Finding("argocd-source-not-rendered", finding.SeverityWarning, app, src.Field, src.Path,
				"this source was not rendered (%s), so what it deploys was not checked", a.Skipped))
		}
	}
	return out
}
func describe(s argo.Source) string {
	if s.Chart != "" {
		return "Helm chart " + s.Chart + " from " + s.RepoURL
	}
	return "path " + s.Path + " of " + s.RepoURL
}
