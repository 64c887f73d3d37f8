package rollouts

import (
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Edits the rollout rules' selftest mutants make. Each changes the first
// Rollout (or the first Service a Rollout names) that it applies to; a
// render without one is "n/a".

// rolloutEdit changes one Rollout (or its strategy) in place and reports
// whether it applied.
type rolloutEdit func(*yaml.RNode) bool

// onRollout applies an edit to the first Rollout it applies to.
func onRollout(edit rolloutEdit) func([]*yaml.RNode, *config.Spec) ([]*yaml.RNode, bool) {
	return func(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
		for _, ro := range rolloutsIn(rs) {
			if edit(ro) {
				return rs, true
			}
		}
		return nil, false
	}
}

// onCanary and onBlueGreen apply an edit to a strategy node.
func onCanary(edit rolloutEdit) func([]*yaml.RNode, *config.Spec) ([]*yaml.RNode, bool) {
	return onRollout(strategyEdit("canary", edit))
}

func onBlueGreen(edit rolloutEdit) func([]*yaml.RNode, *config.Spec) ([]*yaml.RNode, bool) {
	return onRollout(strategyEdit("blueGreen", edit))
}

func strategyEdit(key string, edit rolloutEdit) rolloutEdit {
	return func(ro *yaml.RNode) bool {
		s, err := ro.Pipe(yaml.Lookup("spec", "strategy", key))
		return err == nil && s != nil && s.YNode().Kind == yaml.MappingNode && edit(s)
	}
}

// rolloutsIn returns the Argo Rollouts of a render.
func rolloutsIn(rs []*yaml.RNode) []*yaml.RNode {
	var out []*yaml.RNode
	for _, r := range rs {
		if r.GetKind() == "Rollout" && r.GetApiVersion() != "" && apiGroup(r.GetApiVersion()) == "argoproj.io" && !manifest.IsLocalConfig(r) {
			out = append(out, r)
		}
	}
	return out
}

// setString sets a string field of a map node.
func setString(n *yaml.RNode, field, value string) bool {
	return n.PipeE(yaml.SetField(field, yaml.NewStringRNode(value))) == nil
}

// stringField reads a string field of a map node.
func stringField(n *yaml.RNode, field string) string {
	f := n.Field(field)
	if f == nil || f.Value == nil {
		return ""
	}
	return yaml.GetValue(f.Value)
}

// clearFields removes fields of a strategy (an absent field is the
// mutated state too, so it always applies).
func clearFields(fields ...string) rolloutEdit {
	return func(s *yaml.RNode) bool {
		for _, f := range fields {
			if _, err := s.Pipe(yaml.Clear(f)); err != nil {
				return false
			}
		}
		return true
	}
}

func renameField(field string) rolloutEdit {
	return func(s *yaml.RNode) bool {
		v := stringField(s, field)
		return v != "" && setString(s, field, v+"-selftest-missing")
	}
}
