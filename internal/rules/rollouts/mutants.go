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

// removeJudgmentSteps drops every pause, analysis and experiment step.
func removeJudgmentSteps(canary *yaml.RNode) bool {
	steps, err := canary.Pipe(yaml.Lookup("steps"))
	if err != nil || steps == nil || steps.YNode().Kind != yaml.SequenceNode {
		return false
	}
	var kept []*yaml.Node
	for _, s := range steps.YNode().Content {
		st := yaml.NewRNode(s)
		if st.Field("pause") == nil && st.Field("analysis") == nil && st.Field("experiment") == nil {
			kept = append(kept, s)
		}
	}
	removed := len(kept) < len(steps.YNode().Content)
	steps.YNode().Content = kept
	return removed
}

// jumpToFull replaces the steps with a 10% step straight to 100%.
func jumpToFull(canary *yaml.RNode) bool {
	steps, err := yaml.Parse("- setWeight: 10\n- setWeight: 100\n")
	return err == nil && canary.PipeE(yaml.SetField("steps", steps)) == nil
}

func canaryAtStable(canary *yaml.RNode) bool {
	stable := stringField(canary, "stableService")
	return stable != "" && stringField(canary, "canaryService") != "" && setString(canary, "canaryService", stable)
}

func previewAtActive(bg *yaml.RNode) bool {
	active := stringField(bg, "activeService")
	return active != "" && setString(bg, "previewService", active)
}

func selfPromote(bg *yaml.RNode) bool {
	if _, err := bg.Pipe(yaml.Clear("prePromotionAnalysis")); err != nil {
		return false
	}
	return bg.PipeE(yaml.SetField("autoPromotionEnabled", yaml.NewScalarRNode("true"))) == nil
}

// misspellTemplate misspells the first templateName the Rollout references.
func misspellTemplate(ro *yaml.RNode) bool {
	strategy, err := ro.Pipe(yaml.Lookup("spec", "strategy"))
	if err != nil || strategy == nil {
		return false
	}
	n := firstField(strategy.YNode(), "templateName")
	if n == nil || n.Value == "" {
		return false
	}
	n.Value += "-selftest-typo"
	return true
}

// firstField finds the value node of the first mapping key named key, depth first.
func firstField(n *yaml.Node, key string) *yaml.Node {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key && n.Content[i+1].Kind == yaml.ScalarNode {
				return n.Content[i+1]
			}
		}
	}
	for _, c := range n.Content {
		if found := firstField(c, key); found != nil {
			return found
		}
	}
	return nil
}

func renameWorkloadRef(ro *yaml.RNode) bool {
	ref, err := ro.Pipe(yaml.Lookup("spec", "workloadRef"))
	if err != nil || ref == nil {
		return false
	}
	return renameField("name")(ref)
}

// breakSelector changes the selector of the first Service in the render
// that a Rollout names: an existing label value gets a suffix, or, with no
// label but the hash, a label the pods lack is added.
func breakSelector(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
	named := map[[2]string]bool{}
	for _, ro := range rolloutsIn(rs) {
		for _, name := range namedServices(ro) {
			named[[2]string{ro.GetNamespace(), name}] = true
		}
	}
	for _, svc := range rs {
		if svc.GetKind() != "Service" || svc.GetApiVersion() != "v1" || !named[[2]string{svc.GetNamespace(), svc.GetName()}] {
			continue
		}
		sel, err := svc.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec", "selector"))
		if err == nil && sel != nil && breakMap(sel) {
			return rs, true
		}
	}
	return nil, false
}

func breakMap(sel *yaml.RNode) bool {
	keys, err := sel.Fields()
	if err != nil {
		return false
	}
	for _, k := range keys {
		if k != "rollouts-pod-template-hash" {
			return setString(sel, k, stringField(sel, k)+"-selftest-broken")
		}
	}
	return setString(sel, "kubectl-gate.dev/selftest", "broken")
}

// namedServices lists the Services a Rollout's strategy names.
func namedServices(ro *yaml.RNode) []string {
	var out []string
	for _, p := range [][]string{
		{"canary", "canaryService"}, {"canary", "stableService"},
		{"blueGreen", "activeService"}, {"blueGreen", "previewService"},
	} {
		n, err := ro.Pipe(yaml.Lookup("spec", "strategy", p[0], p[1]))
		if err == nil && n != nil && yaml.GetValue(n) != "" {
			out = append(out, yaml.GetValue(n))
		}
	}
	return out
}
