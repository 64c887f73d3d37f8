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
	ID: "argocd-source-not-rendered", Default: finding.SeverityError, Family: "argocd", MayNoVerdict: true, Unwaivable: true,
	Doc:    "an Application's source was not rendered, so nothing it deploys was checked (a Helm chart, a plugin, another repository, an ApplicationSet, or no --apps-root): no verdict, exit 3, unless the Application is excluded (spec.argocd.exclude, --exclude-app), which every report lists",
	Outage: "a green gate over an Application whose manifests nobody looked at",
	Fix:    "render the source: run with --apps-root (and --repo-url when the checkout's remote differs), vendor the chart, or take the Application out of scope with --exclude-app NAME / spec.argocd.exclude (listed in every report)",
	Reads:  reads,
	Check:  checkSourceNotRendered,
}

// checkSourceNotRendered: nothing the gate did not see may pass (issue 10).
// A source it could not render is no verdict; the trusted caller's config
// may take named Applications out of scope, and the exclusion is reported.
func checkSourceNotRendered(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, f := range findSourceNotRendered(c) {
		// An exclusion (info) is the caller's decision, listed, not a
		// missing verdict.
		f.NoVerdict = f.Severity != finding.SeverityInfo
		out = append(out, f)
	}
	// A repository the gate only assumed the checkout to be is said once,
	// on the source that named it first (issue 19: never silent).
	for _, as := range c.Apps {
		if as.Assumed != "" {
			out = append(out, manifest.Finding("argocd-source-not-rendered", finding.SeverityInfo, as.App, "", nil, "%s", as.Assumed))
		}
	}
	return out
}

func findSourceNotRendered(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, r := range c.Resources {
		if entry, by := rules.ExcludedBy(c, r); (argo.Is(r, "ApplicationSet") || argo.IsApplication(r)) && entry != "" {
			if fs := notSeen(c, r); len(fs) > 0 {
				out = append(out, excludedFinding(r, entry, by, len(fs)))
			}
			continue
		}
		out = append(out, notSeen(c, r)...)
	}
	return out
}

// excludedFinding lists an exclusion in the report: info, never a pass in
// disguise.
func excludedFinding(r *yaml.RNode, entry, by string, n int) finding.Finding {
	f := manifest.Finding("argocd-source-not-rendered", finding.SeverityInfo, r, "", nil,
		"excluded by %s %q: %d source(s) not rendered and not checked, by the caller's decision", by, entry, n)
	return f
}

func notSeen(c *rules.Context, r *yaml.RNode) []finding.Finding {
	var out []finding.Finding
	{
		switch {
		case argo.Is(r, "ApplicationSet"):
			if _, expanded := appRenders(c).Of(r)[-1]; expanded {
				// --apps-root expanded it: its Applications are checked
				// as their own input (or are no verdict there).
				break
			}
			out = append(out, manifest.Finding("argocd-source-not-rendered", finding.SeverityError, r, "spec.generators", nil,
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
		return []finding.Finding{manifest.Finding("argocd-source-not-rendered", finding.SeverityError, app, "spec", nil, "%s: what it deploys was not checked", why)}
	}
	renders := appRenders(c).Of(app)
	var out []finding.Finding
	for _, src := range srcs {
		if !src.Manifests() {
			continue
		}
		a, ok := renders[src.Index]
		switch {
		case !ok:
			out = append(out, manifest.Finding("argocd-source-not-rendered", finding.SeverityError, app, src.Field, src.Path,
				"this source (%s) was not rendered, so what it deploys was not checked; run `kubectl gate check --apps-root DIR` on a checkout of its repository", describe(src)))
		case a.Unchanged != "":
			// diff --base left it unrendered at both revisions: nothing
			// it reads changed.
		case a.Skipped != "":
			out = append(out, manifest.Finding("argocd-source-not-rendered", finding.SeverityError, app, src.Field, src.Path,
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
