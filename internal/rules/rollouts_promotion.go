package rules

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Annotations of the single-writer rule.
const (
	// AnnoSingleWriter marks a Rollout whose service needs exactly one writer.
	AnnoSingleWriter = "kubectl-gate.dev/single-writer"
	// AnnoSingleWriterVerified records that write control, schema
	// compatibility and recovery were verified for it (any value: a ticket,
	// a link, a date).
	AnnoSingleWriterVerified = "kubectl-gate.dev/single-writer-verified"
)

// checkAutoPromotion reports blue/green Rollouts that promote themselves.
// autoPromotionEnabled defaults to true (utils/defaults); with it the
// controller promotes as soon as the new ReplicaSet is ready, or after
// autoPromotionSeconds. A prePromotionAnalysis is a judgment point — the
// promotion waits for it to pass — so it satisfies the rule as a canary
// analysis step does (SPEC §5.3 asks for autoPromotionEnabled: false only).
func checkAutoPromotion(c *Context) []Finding {
	const rule, base = "rollout-bluegreen-autopromotion", "spec.strategy.blueGreen"
	var out []Finding
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
		out = append(out, finding(rule, SeverityError, ro, base+".autoPromotionEnabled", current,
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

// checkSingleWriter warns about Rollouts of single-writer services: both
// strategies run two versions at once. Not an error: the gate cannot see
// whether the application fences its writes, only that it must.
func checkSingleWriter(c *Context) []Finding {
	var out []Finding
	for _, ro := range rollouts(c) {
		annos := ro.GetAnnotations()
		if annos[AnnoSingleWriter] != "true" || annos[AnnoSingleWriterVerified] != "" {
			continue
		}
		overlap := singleWriterOverlap(ro)
		if overlap == "" {
			continue
		}
		out = append(out, finding("rollout-single-writer", SeverityWarning, ro, "metadata.annotations."+AnnoSingleWriter, "true",
			"a single-writer service, but %s. Verify separately: write control (only one version writes: leader election, a lock or a fencing token), schema compatibility (old and new versions read and write the same store), recovery (what an abort or rollback does with data the new version wrote); then set %s",
			overlap, AnnoSingleWriterVerified))
	}
	return out
}

// singleWriterOverlap says when two versions run together; "" for a
// Rollout with neither strategy (the controller rejects it).
func singleWriterOverlap(ro *yaml.RNode) string {
	switch {
	case hasStrategy(ro, "blueGreen"):
		return "this blue/green runs the preview ReplicaSet next to the active one before promotion (start-up, migrations, background work all run), and keeps the old one for scaleDownDelaySeconds (default 30 s) after it"
	case hasStrategy(ro, "canary"):
		return "this canary runs the canary and stable ReplicaSets side by side, both taking traffic, for every step"
	}
	return ""
}
