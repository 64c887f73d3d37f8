package render

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// Parse reads a YAML or JSON stream exactly as kubectl does (see package
// stream): aliases and merge keys resolved, duplicate keys an error, list
// objects (kind: List, DeploymentList, …) unwrapped into their items.
// Objects get the given path annotation.
func Parse(data []byte, path string) ([]*yaml.RNode, error) {
	return stream.Parse(data, path)
}
