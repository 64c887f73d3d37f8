package rollouts

import (
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
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

// SingleWriter warns where a single-writer service runs two versions at once.
var SingleWriter = rules.Rule{
	ID: "rollout-single-writer", Default: finding.SeverityWarning, Family: "rollouts",
	Doc:      "a Rollout annotated kubectl-gate.dev/single-writer: \"true\" runs two versions at once (blue/green preview, canary); names what to verify (write control, schema compatibility, recovery) until kubectl-gate.dev/single-writer-verified is set",
	Outage:   "the preview of a ledger-like service writes beside the active one during start-up and background work, and corrupts state",
	Fix:      "verify write control, schema compatibility and recovery with two versions running, then annotate the Rollout kubectl-gate.dev/single-writer-verified: \"true\"",
	Mutation: "drop the single-writer-verified annotation",
	Follows:  follows,
	Reads:    reads,
	Check:    checkSingleWriter,
	Mutants: []rules.Mutant{
		{Name: "mark a Rollout single-writer without verification", Apply: rules.OnResources(unverifiedSingleWriter)},
	},
}

// checkSingleWriter warns about Rollouts of single-writer services: both
// strategies run two versions at once. Not an error: the gate cannot see
// whether the application fences its writes, only that it must.
func checkSingleWriter(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, ro := range rollouts(c) {
		annos := ro.GetAnnotations()
		if annos[AnnoSingleWriter] != "true" || annos[AnnoSingleWriterVerified] != "" {
			continue
		}
		overlap := singleWriterOverlap(ro)
		if overlap == "" {
			continue
		}
		out = append(out, manifest.Finding("rollout-single-writer", finding.SeverityWarning, ro, "metadata.annotations."+AnnoSingleWriter, "true",
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

// unverifiedSingleWriter marks the first Rollout single-writer and removes
// any verification. The rule warns by default, and a warning does not stop
// a deploy, so the mutant applies only where the config raises the rule to
// error; otherwise the row is n/a rather than a miss by design.
func unverifiedSingleWriter(rs []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
	if cfg.Rules["rollout-single-writer"] != "error" {
		return nil, false
	}
	for _, ro := range rolloutsIn(rs) {
		if ro.PipeE(yaml.SetAnnotation(AnnoSingleWriter, "true")) != nil {
			return nil, false
		}
		if ro.PipeE(yaml.ClearAnnotation(AnnoSingleWriterVerified)) != nil {
			return nil, false
		}
		return rs, true
	}
	return nil, false
}
