package rollouts_test

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/rules/rollouts"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

const steps = "spec.strategy.canary.steps"

func TestRolloutCanaryPause(t *testing.T) {
	routed := "canaryService: web-canary\nstableService: web-stable\ntrafficRouting: {nginx: {stableIngress: web}}"
	ruletest.Run(t, rollouts.CanaryPause, []ruletest.Case{
		{Name: "10 then 100 is a slow full rollout", Input: rollout(canary("", "setWeight: 10", "setWeight: 100")),
			Want: []string{steps + "[0]: setWeight 10 is not followed by a pause, analysis or experiment step before the next setWeight (steps[1])"}},
		{Name: "no steps field", Input: rollout(canary("maxSurge: 1")),
			Want: []string{"spec.strategy.canary: the canary has no steps"}},
		{Name: "empty steps", Input: rollout(canary("steps: []")),
			Want: []string{"spec.strategy.canary: the canary has no steps"}},
		{Name: "last partial weight runs to the end", Input: rollout(canary("", "setWeight: 20", "pause: {}", "setWeight: 50")),
			Want: []string{steps + "[2]: before the end of the steps"}},
		{Name: "scale and route steps are not judgment points", Input: rollout(canary("canaryService: web-canary\nstableService: web-stable\ntrafficRouting: {istio: {virtualService: {name: web}}, managedRoutes: [{name: h}]}",
			"setWeight: 20", "setCanaryScale: {replicas: 2}", "setHeaderRoute: {name: h, match: [{headerName: x, headerValue: {exact: y}}]}", "setMirrorRoute: {name: h}", "setWeight: 100")),
			Want: []string{steps + "[0]: setWeight 20"}},
		{Name: "a zero pause is no pause", Input: rollout(canary("", "setWeight: 20", "pause: {duration: 0s}", "setWeight: 60", "pause: {duration: 0}")),
			Want: []string{steps + "[0]: setWeight 20", steps + "[2]: setWeight 60"}},
		{Name: "quoted weight", Input: rollout(canary("", `setWeight: "30"`)),
			Want: []string{steps + "[0]: setWeight 30"}},
		{Name: "steps without any judgment point", Input: rollout(canary(routed, "setWeight: 100", "setCanaryScale: {matchTrafficWeight: true}")),
			Want: []string{steps + ": none of the 2 steps is a pause, analysis or experiment"}},
		{Name: "setWeight 100 of maxTrafficWeight 1000 is 10%", Input: rollout(canary("trafficRouting: {nginx: {stableIngress: web}, maxTrafficWeight: 1000}", "setWeight: 100", "setWeight: 1000")),
			Want: []string{steps + "[0]: setWeight 100 is not followed"}},
		{Name: "unreadable steps fail closed", Input: rollout(canary("steps: {setWeight: 10}")),
			Want: []string{steps + ": cannot check"}},

		{Name: "pauses of every shape", Input: rollout(canary("", "setWeight: 10", "pause: {duration: 10m}", "setWeight: 30", "pause: {duration: 30}",
			"setWeight: 60", `pause: {duration: "90"}`, "setWeight: 90", "pause: {}", "setWeight: 100"))},
		{Name: "inline analysis step", Input: rollout(canary("", "setWeight: 25", "analysis: {templates: [{templateName: success-rate}]}"))},
		{Name: "experiment with analyses", Input: rollout(canary("", "setWeight: 25",
			"experiment: {templates: [{name: c, specRef: canary}], analyses: [{name: a, templateName: success-rate}]}"))},
		// An experiment step completes only when its Experiment succeeds:
		// with a duration the weight holds for it, without one it runs
		// until someone ends it (rollout/canary.go completedCurrentCanaryStep).
		{Name: "experiment with a duration", Input: rollout(canary("", "setWeight: 25", "experiment: {duration: 30m, templates: [{name: c, specRef: canary}]}"))},
		{Name: "baseline vs canary experiment only", Input: rollout(canary("", "experiment: {templates: [{name: b, specRef: stable}, {name: c, specRef: canary}]}"))},
		{Name: "setWeight 100 after a pause", Input: rollout(canary("", "setWeight: 50", "pause: {duration: 1h}", "setWeight: 100"))},
		{Name: "blue/green is not a canary", Input: rollout("blueGreen: {activeService: a, previewService: p, autoPromotionEnabled: false}")},
		{Name: "another group's Rollout kind", Input: "apiVersion: example.com/v1\nkind: Rollout\nmetadata: {name: x}\nspec: {strategy: {canary: {}}}\n"},
		{Name: "local config is not applied", Input: "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: x, annotations: {config.kubernetes.io/local-config: \"true\"}}\nspec: {strategy: {canary: {}}}\n"},
	})
}

// TestRolloutFindingShape checks that a finding names the resource, the
// field path and, through kustomize's origin annotation, the source file.
func TestRolloutFindingShape(t *testing.T) {
	stream := rolloutWith("metadata:\n  name: web\n  namespace: shop\n  annotations:\n    config.kubernetes.io/origin: |\n      path: base/rollout.yaml",
		podTemplate, canary("", "setWeight: 10", "setWeight: 50", "pause: {}", "setWeight: 100"))
	got := checkRule(t, "rollout-canary-pause", stream)
	if len(got) != 1 {
		t.Fatalf("want 1 finding, got:\n%s", formatAll(got))
	}
	f := got[0]
	if f.ResourceRef == nil || f.ResourceRef.String() != "Rollout/web (ns shop)" || f.ResourceRef.APIVersion != "argoproj.io/v1alpha1" {
		t.Errorf("resourceRef = %+v", f.ResourceRef)
	}
	if f.Field == nil || f.Field.Path != "spec.strategy.canary.steps[0]" || f.Field.CurrentValue != "10" {
		t.Errorf("field = %+v", f.Field)
	}
	if f.File == nil || f.File.Path != "base/rollout.yaml" {
		t.Errorf("file = %+v", f.File)
	}
}
