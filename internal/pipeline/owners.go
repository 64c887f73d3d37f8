package pipeline

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/flux"
)

// IsAppOwner reports whether r is an object whose sources the pipeline
// expands: an Argo CD Application or ApplicationSet, or a Flux
// Kustomization or HelmRelease. These are what --exclude-app names.
func IsAppOwner(r *yaml.RNode) bool {
	return argo.IsApplication(r) || argo.Is(r, "ApplicationSet") || flux.IsKustomization(r) || flux.IsHelmRelease(r)
}
