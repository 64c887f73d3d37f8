package selftest

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// HelmAutoPromotionRule is the rule the Helm value mutant must make fire.
const HelmAutoPromotionRule = "rollout-bluegreen-autopromotion"

// HelmAutoPromotionName names the Helm value mutant (issue 13 §5) in the
// table: a value of the chart, not the rendered Rollout, turns
// autoPromotionEnabled on — the change a pull request makes to a chart's
// values file or an Application's helm.parameters.
const HelmAutoPromotionName = "a Helm value that turns autoPromotion on"

// MaxHelmCandidates bounds the chart renders the Helm mutant may cost:
// values whose name speaks of auto-promotion are tried first, then the
// other false booleans, up to this many.
const MaxHelmCandidates = 64

// RenderWith renders the chart again with one value path set to true.
type RenderWith func(ctx context.Context, path string) ([]*yaml.RNode, error)

// FindAutoPromotionValue looks for the chart value that turns a blue/green
// Rollout of the baseline render on to promote itself: each candidate (a
// value path that is false, helm.FalseBools) is set to true through render,
// and the first whose render has a blue/green Rollout of the baseline, with
// autoPromotionEnabled explicitly false there, now with autoPromotionEnabled
// true or unset and no prePromotionAnalysis, is the mutant. It returns that
// path and render, or "" when no candidate does it (the chart has no such
// value: the row is n/a). A candidate whose render fails (a schema refuses
// it) is passed over; the context ending is an error.
func FindAutoPromotionValue(ctx context.Context, baseline []*yaml.RNode, candidates []string, render RenderWith) (string, []*yaml.RNode, error) {
	waiting := map[string]bool{}
	for _, r := range baseline {
		if v, ok := blueGreenAutoPromotion(r); ok && v == "false" {
			waiting[identity(r)] = true
		}
	}
	if len(waiting) == 0 {
		return "", nil, nil
	}
	for _, path := range ordered(candidates) {
		if err := ctx.Err(); err != nil {
			return "", nil, fmt.Errorf("looking for the Helm value that turns autoPromotion on: %w", context.Cause(ctx))
		}
		out, err := render(ctx, path)
		if err != nil {
			continue
		}
		for _, r := range out {
			if !waiting[identity(r)] {
				continue
			}
			if v, ok := blueGreenAutoPromotion(r); ok && v != "false" && !hasPrePromotion(r) {
				return path, out, nil
			}
		}
	}
	return "", nil, nil
}

// ordered puts the candidates that name auto-promotion first and keeps at
// most MaxHelmCandidates.
func ordered(candidates []string) []string {
	var first, rest []string
	for _, c := range candidates {
		if strings.Contains(strings.ToLower(c), "autopromot") {
			first = append(first, c)
		} else {
			rest = append(rest, c)
		}
	}
	out := append(first, rest...)
	if len(out) > MaxHelmCandidates {
		out = out[:MaxHelmCandidates]
	}
	return out
}

// RunRender runs the gate on a render that stands for the input (a
// mutant made outside the rules, such as the Helm value mutant) and judges
// it as Run judges a rule's mutant: the row is "fail" when rule stops it.
func RunRender(ctx context.Context, rule, name string, mutated, resources []*yaml.RNode, opts gate.Options, deps gate.Deps, failOnWarning bool) (Row, error) {
	m := Mutant{Rule: rule, Mutant: rules.Mutant{Name: name, Apply: func(s *rules.Subject) bool {
		s.Resources = copyAll(mutated)
		return true
	}}}
	return runMutant(ctx, m, resources, opts, deps, failOnWarning)
}

// blueGreenAutoPromotion is a blue/green Rollout's autoPromotionEnabled as
// written ("" when unset); ok is false for anything else.
func blueGreenAutoPromotion(r *yaml.RNode) (string, bool) {
	if r.GetKind() != "Rollout" || !strings.HasPrefix(r.GetApiVersion(), "argoproj.io/") {
		return "", false
	}
	bg, err := r.Pipe(yaml.Lookup("spec", "strategy", "blueGreen"))
	if err != nil || bg == nil {
		return "", false
	}
	v, err := bg.Pipe(yaml.Lookup("autoPromotionEnabled"))
	if err != nil || v == nil {
		return "", true
	}
	return v.YNode().Value, true
}

func hasPrePromotion(r *yaml.RNode) bool {
	t, err := r.Pipe(yaml.Lookup("spec", "strategy", "blueGreen", "prePromotionAnalysis", "templates"))
	return err == nil && t != nil && len(t.YNode().Content) > 0
}

func identity(r *yaml.RNode) string {
	return r.GetApiVersion() + "/" + r.GetKind() + "/" + r.GetNamespace() + "/" + r.GetName()
}
