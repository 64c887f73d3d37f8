package selftest

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
)

var renderMutants = []Mutant{
	{Rule: "render-empty", Name: "empty the render", Apply: func(_ []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
		return []*yaml.RNode{}, true
	}},
	{Rule: "render-count", Name: "drop one object", Apply: func(rs []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
		if cfg.Render.ExpectResources == nil || gate.Count(rs) == 0 {
			return nil, false
		}
		return rs[1:], true
	}},
}
