package rules

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// argocdRules are the Argo CD rules (SPEC §5.4). The source rules judge an
// Application against the render of its local source, which the plugin
// makes with --apps-root (Context.Apps); an Application whose source was not
// rendered is reported by argocd-source-not-rendered, never passed silently.
var argocdRules = []Rule{
	{
		ID: "argocd-destination-namespace", Default: SeverityError, Family: "argocd",
		Doc:      "an Application's spec.destination.namespace differs from the namespace its source's namespaced objects render into, or it has none while they have none",
		Outage:   "the sync goes green and nothing lands where expected (argo-cd#2280)",
		Mutation: "change the destination namespace",
		Check:    checkDestinationNamespace,
	},
	{
		ID: "argocd-ignore-differences", Default: SeverityError, Family: "argocd",
		Doc:      "an ignoreDifferences entry (Application, ApplicationSet template or argocd-cm resource.customizations) has no kind, covers every object of a kind with a path outside the allow-list, hides /, /spec, /metadata, /spec/template or a whole object by jq, or trusts a human field manager (kubectl, kubectl-edit, …)",
		Outage:   "a hand edit or a wrong image drifts in the cluster while Argo CD shows Synced",
		Mutation: "widen an ignoreDifferences pointer to /spec",
		Check:    checkIgnoreDifferences,
	},
	{
		ID: "argocd-source-empty", Default: SeverityError, Family: "argocd",
		Doc:      "an Application's local source renders zero objects",
		Outage:   "an Application with nothing to manage syncs green (and, with prune, deletes what it ran)",
		Mutation: "empty an Application's source",
		Check:    checkSourceEmpty,
	},
	{
		ID: "argocd-source-not-rendered", Default: SeverityWarning, Family: "argocd",
		Doc:    "an Application's source was not rendered, so nothing it deploys was checked: a Helm chart, a plugin, another repository, an ApplicationSet, or no --apps-root",
		Outage: "a green gate over an Application whose manifests nobody looked at",
		Check:  checkSourceNotRendered,
	},
}

// eachRendered calls fn for every Application of the input and every render
// of its sources.
func eachRendered(c *Context, fn func(app *yaml.RNode, src ArgoSource, a AppSource)) {
	for _, app := range c.Resources {
		if !IsApplication(app) {
			continue
		}
		renders := appSources(c, app)
		for _, src := range ArgoSources(app) {
			if a, ok := renders[src.Index]; ok && a.Err == nil && a.Skipped == "" {
				fn(app, src, a)
			}
		}
	}
}

func checkDestinationNamespace(c *Context) []Finding {
	var out []Finding
	eachRendered(c, func(app *yaml.RNode, src ArgoSource, a AppSource) {
		dest := str(app, "spec.destination.namespace")
		byNS := namespacedByNamespace(a.Resources)
		for _, ns := range sortedNS(byNS) {
			objs := byNS[ns]
			switch {
			case ns == "" && dest == "":
				out = append(out, finding("argocd-destination-namespace", SeverityError, app, "spec.destination.namespace", nil,
					"has no destination namespace, and %s of its source %s (%s) set no namespace either: Argo CD applies them to whatever namespace its cluster connection defaults to, not a chosen one",
					count(len(objs), "namespaced object"), a.Path, sample(objs)))
			case ns != "" && dest != "" && ns != dest:
				f := finding("argocd-destination-namespace", SeverityError, app, "spec.destination.namespace", dest,
					"destination namespace %q, but %s of its source %s render into namespace %q (%s): the sync goes green and nothing lands in %q",
					dest, count(len(objs), "object"), a.Path, ns, sample(objs), dest)
				if len(byNS) == 1 {
					f.Field.ProposedValue = ns
				}
				out = append(out, f)
			}
		}
	})
	return out
}

// namespacedByNamespace groups the namespaced objects of a render by the
// namespace they render into ("" when they set none: they land in the
// destination namespace). Argo CD's own objects are left out: an
// app-of-apps renders Applications into Argo CD's namespace on purpose.
func namespacedByNamespace(resources []*yaml.RNode) map[string][]*yaml.RNode {
	scope := newScopeOf(resources)
	out := map[string][]*yaml.RNode{}
	for _, r := range resources {
		if IsLocalConfig(r) || IsArgoConfig(r) || scope.cluster(kindOf(r)) {
			continue
		}
		out[namespaceOf(r)] = append(out[namespaceOf(r)], r)
	}
	return out
}

func sortedNS(m map[string][]*yaml.RNode) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sample names up to three objects.
func sample(objs []*yaml.RNode) string {
	var names []string
	for i, o := range objs {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(objs)-3))
			break
		}
		names = append(names, kindOf(o)+"/"+nameOf(o))
	}
	return strings.Join(names, ", ")
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func checkSourceEmpty(c *Context) []Finding {
	var out []Finding
	eachRendered(c, func(app *yaml.RNode, src ArgoSource, a AppSource) {
		for _, r := range a.Resources {
			if !IsLocalConfig(r) {
				return
			}
		}
		out = append(out, finding("argocd-source-empty", SeverityError, app, src.PathField(), src.Path,
			"its source %s renders zero objects: Argo CD syncs it green with nothing to manage (and with prune: true deletes what it ran)", a.Path))
	})
	return out
}

func checkSourceNotRendered(c *Context) []Finding {
	var out []Finding
	for _, r := range c.Resources {
		switch {
		case isArgo(r, "ApplicationSet"):
			out = append(out, finding("argocd-source-not-rendered", SeverityWarning, r, "spec.generators", nil,
				"ApplicationSet %s generates its Applications at run time: the gate does not run generators, so what they deploy was not checked", nameOf(r)))
		case IsApplication(r):
			out = append(out, notRendered(c, r)...)
		}
	}
	return out
}

func notRendered(c *Context, app *yaml.RNode) []Finding {
	srcs := ArgoSources(app)
	if len(srcs) == 0 {
		why := "has no spec.source or spec.sources"
		if app.Field("spec") != nil && str(app, "spec.sourceHydrator.drySource.repoURL") != "" {
			why = "uses spec.sourceHydrator, which the gate does not render"
		}
		return []Finding{finding("argocd-source-not-rendered", SeverityWarning, app, "spec", nil, "%s: what it deploys was not checked", why)}
	}
	renders := appSources(c, app)
	var out []Finding
	for _, src := range srcs {
		if !src.Manifests() {
			continue
		}
		a, ok := renders[src.Index]
		switch {
		case !ok:
			out = append(out, finding("argocd-source-not-rendered", SeverityWarning, app, src.Field, src.Path,
				"this source (%s) was not rendered, so what it deploys was not checked; run `kubectl gate check --apps-root DIR` on a checkout of its repository", describe(src)))
		case a.Skipped != "":
			out = append(out, finding("argocd-source-not-rendered", SeverityWarning, app, src.Field, src.Path,
				"this source was not rendered (%s), so what it deploys was not checked", a.Skipped))
		}
	}
	return out
}

func describe(s ArgoSource) string {
	if s.Chart != "" {
		return "Helm chart " + s.Chart + " from " + s.RepoURL
	}
	return "path " + s.Path + " of " + s.RepoURL
}
