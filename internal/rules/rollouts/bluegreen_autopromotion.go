package rollouts

import (
	"fmt"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// BlueGreenAutoPromotion fires on a blue/green that promotes itself untested.
var BlueGreenAutoPromotion = rules.Rule{
	ID: "rollout-bluegreen-autopromotion", Default: finding.SeverityError, Family: "rollouts",
	Doc:      "a blue/green promotes itself: autoPromotionEnabled is not explicitly false and no prePromotionAnalysis gates the promotion",
	Outage:   "a blue/green switches all production traffic to the new version as soon as it is ready, untested",
	Fix:      "set spec.strategy.blueGreen.autoPromotionEnabled: false, or gate the promotion with a prePromotionAnalysis",
	Mutation: "flip autoPromotionEnabled to true and drop prePromotionAnalysis",
	Follows:  follows,
	Reads:    reads,
	Check:    checkAutoPromotion,
	Mutants: []rules.Mutant{
		{Name: "flip autoPromotionEnabled to true and drop prePromotionAnalysis", Apply: rules.OnResources(onBlueGreen(selfPromote))},
		{Name: "remove autoPromotionEnabled (it defaults to true) and prePromotionAnalysis", Apply: rules.OnResources(onBlueGreen(clearFields("autoPromotionEnabled", "prePromotionAnalysis")))},
	},
}

// checkAutoPromotion reports blue/green Rollouts that promote themselves.
// autoPromotionEnabled defaults to true (utils/defaults); with it the
// controller promotes as soon as the new ReplicaSet is ready, or after
// autoPromotionSeconds. A prePromotionAnalysis is a judgment point — the
// promotion waits for it to pass — so it satisfies the rule as a canary
// analysis step does (the rule's Doc says so).
func checkAutoPromotion(c *rules.Context) []finding.Finding {
	const rule, base = "rollout-bluegreen-autopromotion", "spec.strategy.blueGreen"
	var out []finding.Finding
	for _, ro := range rollouts(c) {
		if !hasStrategy(ro, "blueGreen") {
			continue
		}
		var bg struct {
			AutoPromotionEnabled *scalar          `yaml:"autoPromotionEnabled"`
			AutoPromotionSeconds scalar           `yaml:"autoPromotionSeconds"`
			Pre                  *rolloutAnalysis `yaml:"prePromotionAnalysis"`
		}
		if _, err := decodeAt(ro, base, &bg); err != nil {
			out = append(out, unreadable(rule, ro, base, err))
			continue
		}
		if (bg.AutoPromotionEnabled != nil && *bg.AutoPromotionEnabled == "false") || (bg.Pre != nil && len(bg.Pre.Templates) > 0) {
			continue
		}
		var current any
		if bg.AutoPromotionEnabled != nil {
			current = string(*bg.AutoPromotionEnabled)
		}
		out = append(out, manifest.Finding(rule, finding.SeverityError, ro, base+".autoPromotionEnabled", current,
			"the blue/green promotes itself: autoPromotionEnabled is %s and no prePromotionAnalysis gates the promotion, so the new version takes all production traffic %s; set autoPromotionEnabled: false or add a prePromotionAnalysis",
			describeAutoPromotion(bg.AutoPromotionEnabled), whenPromoted(bg.AutoPromotionSeconds)))
	}
	return out
}
func describeAutoPromotion(v *scalar) string {
	if v == nil {
		return "not set (it defaults to true)"
	}
	return string(*v)
}
func whenPromoted(seconds scalar) string {
	if s := durationSeconds(string(seconds)); seconds != "" && s > 0 {
		return fmt.Sprintf("%d s after it is ready (autoPromotionSeconds), watched or not", s)
	}
	return "as soon as it is ready"
}

func selfPromote(bg *yaml.RNode) bool {
	if _, err := bg.Pipe(yaml.Clear("prePromotionAnalysis")); err != nil {
		return false
	}
	// A boolean true, tagged: an untagged scalar added where the field was
	// absent is a string to the schema, and the mutant would be caught by
	// the schema rule instead of this one.
	v := yaml.NewScalarRNode("true")
	v.YNode().Tag = yaml.NodeTagBool
	return bg.PipeE(yaml.SetField("autoPromotionEnabled", v)) == nil
}
