package flux

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// NotRendered reports Flux objects whose render the gate did not see:
// without --apps-root nothing Flux deploys is rendered. Like an Argo CD
// source the gate did not render, that is no verdict (exit 3), never a
// pass; the trusted config may take named objects out of scope
// (spec.argocd.exclude, --exclude-app), and each exclusion is listed.
var NotRendered = rules.Rule{
	ID: "flux-not-rendered", Default: finding.SeverityError, Family: "flux", MayNoVerdict: true, Unwaivable: true,
	Doc:    "a Flux Kustomization or HelmRelease was not rendered, so nothing it deploys was checked (no --apps-root): no verdict, exit 3, unless it is excluded (spec.argocd.exclude, --exclude-app), which every report lists",
	Outage: "a green gate over a Flux repository whose manifests nobody looked at",
	Fix:    "run with --apps-root and -R so the GitRepository is in the input, or take the object out of scope with --exclude-app NAME / spec.argocd.exclude (listed in every report)",
	Reads:  reads,
	Check:  checkNotRendered,
}

// IsHelmRelease reports whether r is a Flux HelmRelease.
func IsHelmRelease(r *yaml.RNode) bool {
	return strings.HasPrefix(manifest.APIVersion(r), "helm.toolkit.fluxcd.io/") && manifest.Kind(r) == "HelmRelease"
}

func checkNotRendered(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, r := range c.Resources {
		if !IsKustomization(r) && !IsHelmRelease(r) {
			continue
		}
		a, ok := argo.RendersOf(c.Apps, r)[-1]
		if ok && a.Unrendered == "" {
			continue
		}
		if e, by := rules.ExcludedBy(c, r); e != "" {
			out = append(out, manifest.Finding("flux-not-rendered", finding.SeverityInfo, r, "", nil,
				"excluded by %s %q: not rendered and not checked, by the caller's decision", by, e))
			continue
		}
		f := manifest.Finding("flux-not-rendered", finding.SeverityError, r, "spec", nil,
			"was not rendered, so what it deploys was not checked; run `kubectl gate check -R -f DIR --apps-root CHECKOUT` with its GitRepository in the input")
		if ok {
			f = manifest.Finding("flux-not-rendered", finding.SeverityError, r, "spec", nil,
				"was not rendered (%s), so what it deploys was not checked", a.Unrendered)
		}
		f.NoVerdict = true
		out = append(out, f)
	}
	return out
}

// reads are the kinds the Flux rules read beyond metadata (Rule.Reads).
var reads = []string{"Kustomization", "HelmRelease"}
