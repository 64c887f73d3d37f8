package flux

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// NotRendered warns about Flux objects whose render the gate did not see:
// without --apps-root nothing Flux deploys is rendered, and that must be
// said, never passed silently.
var NotRendered = rules.Rule{
	ID: "flux-not-rendered", Default: finding.SeverityWarning, Family: "flux",
	Doc:    "a Flux Kustomization or HelmRelease was not rendered, so nothing it deploys was checked (no --apps-root)",
	Outage: "a green gate over a Flux repository whose manifests nobody looked at",
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
		if _, ok := argo.RendersOf(c.Apps, r)[-1]; ok {
			continue
		}
		out = append(out, manifest.Finding("flux-not-rendered", finding.SeverityWarning, r, "spec", nil,
			"was not rendered, so what it deploys was not checked; run `kubectl gate check -R -f DIR --apps-root CHECKOUT` with its GitRepository in the input"))
	}
	return out
}
