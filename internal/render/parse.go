package render

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// Parse reads a YAML or JSON stream exactly as kubectl does (see package
// stream): aliases and merge keys resolved, duplicate keys an error, list
// objects (kind: List, DeploymentList, …) unwrapped into their items, a
// document without apiVersion or kind an error. kustomize's own
// configuration (a Kustomization, a transformer config) is not a rendered
// object: a *config.UsageError that points at -k. Objects get the given
// path annotation.
func Parse(data []byte, path string) ([]*yaml.RNode, error) {
	return parseEach(data, path, nil)
}

// parseEach is Parse, telling each of the objects as they are read
// (stream.ParseEach).
func parseEach(data []byte, path string, each stream.Each) ([]*yaml.RNode, error) {
	nodes, err := stream.ParseEach(data, path, each)
	if err != nil {
		return nil, err
	}
	for i, n := range nodes {
		if apiVersion := n.GetApiVersion(); IsKustomizeConfig(apiVersion) {
			return nil, &config.UsageError{Where: path, Err: fmt.Errorf(
				"document %d (counting from 1) is kustomize configuration (%s %s), not a rendered object: give its directory with -k", i+1, apiVersion, n.GetKind())}
		}
	}
	return nodes, nil
}
