// Package all lists every rule of the gate, explicitly and in order: the
// render rules, then images, rollouts, argocd, flux and live, by id within a
// family. The engine, selftest, the plugin's `rules` command (and so the
// README's rule table), SARIF metadata and config validation all read this
// list; a rule that is not here does not exist.
package all

import (
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/argocd"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/exceptions"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/flux"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/images"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/live"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/policy"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/render"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/rollouts"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/schema"
)

// Rules returns every rule, in the order they are listed and run.
func Rules() []rules.Rule {
	return []rules.Rule{
		render.Placement,
		render.Count,
		render.Duplicate,
		render.Empty,

		schema.Deprecated,
		schema.Removed,
		schema.APIValidation,
		schema.Schema,
		schema.Unknown,

		images.Digest,
		images.Stale,
		images.Lock,
		images.LockUnused,
		images.PinnedBy,
		images.PodSpecPath,
		images.Registry,
		images.Resolve,
		images.Signature,

		rollouts.AnalysisRef,
		rollouts.BlueGreenAutoPromotion,
		rollouts.BlueGreenServices,
		rollouts.CanaryPause,
		rollouts.CanaryServices,
		rollouts.InvalidSpec,
		rollouts.ServiceSelector,
		rollouts.SingleWriter,
		rollouts.TrafficRef,
		rollouts.WorkloadRef,

		argocd.SharedObject,
		argocd.DestinationNamespace,
		argocd.IgnoreDifferences,
		argocd.SourceEmpty,
		argocd.SourceNotRendered,

		flux.NotRendered,
		flux.TargetNamespace,

		policy.Policy,

		exceptions.Expired,
		exceptions.Ignored,
		exceptions.Invalid,
		exceptions.Unused,

		live.Health,
		live.Images,
		live.ResourceCount,
		live.Revision,
	}
}

// Lookup returns the rule with the given id.
func Lookup(id string) (rules.Rule, bool) {
	for _, r := range Rules() {
		if r.ID == id {
			return r, true
		}
	}
	return rules.Rule{}, false
}

// IDs returns every rule id, in list order.
func IDs() []string {
	rs := Rules()
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}
