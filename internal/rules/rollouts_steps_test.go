package rules_test

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

const steps = "spec.strategy.canary.steps"

func TestRolloutCanaryPause(t *testing.T) {
	routed := "canaryService: web-canary\nstableService: web-stable\ntrafficRouting: {nginx: {stableIngress: web}}"
	runCases(t, "rollout-canary-pause", []ruleCase{
		{name: "10 then 100 is a slow full rollout", stream: rollout(canary("", "setWeight: 10", "setWeight: 100")),
			want: []string{steps + "[0]: setWeight 10 is not followed by a pause, analysis or experiment step before the next setWeight (steps[1])"}},
		{name: "no steps field", stream: rollout(canary("maxSurge: 1")),
			want: []string{"spec.strategy.canary: the canary has no steps"}},
		{name: "empty steps", stream: rollout(canary("steps: []")),
			want: []string{"spec.strategy.canary: the canary has no steps"}},
		{name: "last partial weight runs to the end", stream: rollout(canary("", "setWeight: 20", "pause: {}", "setWeight: 50")),
			want: []string{steps + "[2]: before the end of the steps"}},
		{name: "scale and route steps are not judgment points", stream: rollout(canary("canaryService: web-canary\nstableService: web-stable\ntrafficRouting: {istio: {virtualService: {name: web}}, managedRoutes: [{name: h}]}",
			"setWeight: 20", "setCanaryScale: {replicas: 2}", "setHeaderRoute: {name: h, match: [{headerName: x, headerValue: {exact: y}}]}", "setMirrorRoute: {name: h}", "setWeight: 100")),
			want: []string{steps + "[0]: setWeight 20"}},
		{name: "a zero pause is no pause", stream: rollout(canary("", "setWeight: 20", "pause: {duration: 0s}", "setWeight: 60", "pause: {duration: 0}")),
			want: []string{steps + "[0]: setWeight 20", steps + "[2]: setWeight 60"}},
		{name: "quoted weight", stream: rollout(canary("", `setWeight: "30"`)),
			want: []string{steps + "[0]: setWeight 30"}},
		{name: "steps without any judgment point", stream: rollout(canary(routed, "setWeight: 100", "setCanaryScale: {matchTrafficWeight: true}")),
			want: []string{steps + ": none of the 2 steps is a pause, analysis or experiment"}},
		{name: "setWeight 100 of maxTrafficWeight 1000 is 10%", stream: rollout(canary("trafficRouting: {nginx: {stableIngress: web}, maxTrafficWeight: 1000}", "setWeight: 100", "setWeight: 1000")),
			want: []string{steps + "[0]: setWeight 100 is not followed"}},
		{name: "unreadable steps fail closed", stream: rollout(canary("steps: {setWeight: 10}")),
			want: []string{steps + ": cannot check"}},

		{name: "pauses of every shape", stream: rollout(canary("", "setWeight: 10", "pause: {duration: 10m}", "setWeight: 30", "pause: {duration: 30}",
			"setWeight: 60", `pause: {duration: "90"}`, "setWeight: 90", "pause: {}", "setWeight: 100"))},
		{name: "inline analysis step", stream: rollout(canary("", "setWeight: 25", "analysis: {templates: [{templateName: success-rate}]}"))},
		{name: "experiment with analyses", stream: rollout(canary("", "setWeight: 25",
			"experiment: {templates: [{name: c, specRef: canary}], analyses: [{name: a, templateName: success-rate}]}"))},
		// An experiment step completes only when its Experiment succeeds:
		// with a duration the weight holds for it, without one it runs
		// until someone ends it (rollout/canary.go completedCurrentCanaryStep).
		{name: "experiment with a duration", stream: rollout(canary("", "setWeight: 25", "experiment: {duration: 30m, templates: [{name: c, specRef: canary}]}"))},
		{name: "baseline vs canary experiment only", stream: rollout(canary("", "experiment: {templates: [{name: b, specRef: stable}, {name: c, specRef: canary}]}"))},
		{name: "setWeight 100 after a pause", stream: rollout(canary("", "setWeight: 50", "pause: {duration: 1h}", "setWeight: 100"))},
		{name: "blue/green is not a canary", stream: rollout("blueGreen: {activeService: a, previewService: p, autoPromotionEnabled: false}")},
		{name: "another group's Rollout kind", stream: "apiVersion: example.com/v1\nkind: Rollout\nmetadata: {name: x}\nspec: {strategy: {canary: {}}}\n"},
		{name: "local config is not applied", stream: "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: x, annotations: {config.kubernetes.io/local-config: \"true\"}}\nspec: {strategy: {canary: {}}}\n"},
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

// TestRolloutRulesDocumented checks the registry entries the README table,
// --help and selftest read.
func TestRolloutRulesDocumented(t *testing.T) {
	want := []string{"rollout-canary-pause", "rollout-canary-services", "rollout-bluegreen-services", "rollout-bluegreen-autopromotion",
		"rollout-single-writer", "rollout-analysis-ref", "rollout-service-selector", "rollout-workload-ref"}
	for _, id := range want {
		r, ok := rules.Lookup(id)
		switch {
		case !ok:
			t.Errorf("%s is not registered", id)
		case r.Family != "rollouts" || r.Check == nil || r.Doc == "" || r.Outage == "" || r.Mutation == "":
			t.Errorf("%s is incomplete: %+v", id, r)
		case strings.Contains(r.Doc+r.Outage, "\n"):
			t.Errorf("%s: Doc and Outage must be one line", id)
		}
	}
	if r, _ := rules.Lookup("rollout-single-writer"); r.Default != rules.SeverityWarning {
		t.Errorf("rollout-single-writer defaults to %s, want warning", r.Default)
	}
}
