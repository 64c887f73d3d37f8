package rules_test

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

func TestRolloutBlueGreenAutoPromotion(t *testing.T) {
	bg := func(s string) string {
		return rollout("blueGreen:\n  activeService: web-active\n  previewService: web-preview\n" + indent(s, 2))
	}
	const path = bgPath + ".autoPromotionEnabled"
	runCases(t, "rollout-bluegreen-autopromotion", []ruleCase{
		{name: "not set defaults to true", stream: bg(""),
			want: []string{path + ": autoPromotionEnabled is not set (it defaults to true) and no prePromotionAnalysis gates the promotion, so the new version takes all production traffic as soon as it is ready"}},
		{name: "explicitly true", stream: bg("autoPromotionEnabled: true"),
			want: []string{path + ": autoPromotionEnabled is true"}},
		{name: "delayed self-promotion is still self-promotion", stream: bg("autoPromotionSeconds: 300"),
			want: []string{path + ": 300 s after it is ready (autoPromotionSeconds), watched or not"}},
		{name: "prePromotionAnalysis without templates", stream: bg("prePromotionAnalysis: {templates: []}"),
			want: []string{path + ": no prePromotionAnalysis gates the promotion"}},
		{name: "postPromotionAnalysis runs after the switch", stream: bg("postPromotionAnalysis: {templates: [{templateName: soak}]}"),
			want: []string{path + ": no prePromotionAnalysis"}},

		{name: "manual promotion", stream: bg("autoPromotionEnabled: false")},
		{name: "manual promotion, quoted", stream: bg(`autoPromotionEnabled: "false"`)},
		{name: "prePromotionAnalysis gates it", stream: bg("prePromotionAnalysis: {templates: [{templateName: smoke}]}")},
		{name: "canary has no auto-promotion", stream: rollout(canary("", pauseSteps))},
	})
}

func TestRolloutSingleWriter(t *testing.T) {
	meta := func(annos string) string {
		return "metadata:\n  name: ledger\n  namespace: shop\n  annotations: " + annos
	}
	bg := "blueGreen: {activeService: a, previewService: p, autoPromotionEnabled: false}"
	const path = "metadata.annotations." + rules.AnnoSingleWriter
	runCases(t, "rollout-single-writer", []ruleCase{
		{name: "blue/green single writer", stream: rolloutWith(meta(`{kubectl-gate.dev/single-writer: "true"}`), podTemplate, bg),
			want: []string{path + ": the preview ReplicaSet next to the active one before promotion (start-up, migrations, background work all run)"}},
		{name: "names what to verify", stream: rolloutWith(meta(`{kubectl-gate.dev/single-writer: "true"}`), podTemplate, bg),
			want: []string{path + ": Verify separately: write control (only one version writes: leader election, a lock or a fencing token), schema compatibility (old and new versions read and write the same store), recovery"}},
		{name: "canary single writer", stream: rolloutWith(meta(`{kubectl-gate.dev/single-writer: "true"}`), podTemplate, canary("", pauseSteps)),
			want: []string{path + ": both taking traffic"}},

		{name: "verified", stream: rolloutWith(meta(`{kubectl-gate.dev/single-writer: "true", kubectl-gate.dev/single-writer-verified: "OPS-1234"}`), podTemplate, bg)},
		{name: "not a single writer", stream: rolloutWith(meta(`{kubectl-gate.dev/single-writer: "false"}`), podTemplate, bg)},
		{name: "no annotation", stream: rollout(bg)},
	})
	got := checkRule(t, "rollout-single-writer", rolloutWith(meta(`{kubectl-gate.dev/single-writer: "true"}`), podTemplate, bg))
	if len(got) != 1 || got[0].Severity != rules.SeverityWarning {
		t.Errorf("want one warning, got %s", formatAll(got))
	}
}

func TestRolloutWorkloadRef(t *testing.T) {
	ref := func(r string) string {
		return rolloutWith("metadata: {name: web, namespace: shop}", "  workloadRef: "+r+"\n", canary("", pauseSteps))
	}
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 0\n" +
		"  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: \"" + webImage + "\"}]}\n---\n"
	const path = "spec.workloadRef"
	runCases(t, "rollout-workload-ref", []ruleCase{
		{name: "renamed Deployment", stream: ref("{apiVersion: apps/v1, kind: Deployment, name: web-v2}") + deploy,
			want: []string{path + `.name: workloadRef names Deployment "web-v2", which is not in the render (namespace shop): the Rollout has no pod template`}},
		{name: "Deployment in another namespace", stream: ref("{apiVersion: apps/v1, kind: Deployment, name: web}") +
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: other}\n",
			want: []string{path + ".name: is not in the render"}},
		{name: "unsupported kind", stream: ref("{apiVersion: apps/v1, kind: StatefulSet, name: web}"),
			want: []string{path + `: workloadRef names apiVersion "apps/v1" kind "StatefulSet"`}},
		{name: "no apiVersion", stream: ref("{kind: Deployment, name: web}") + deploy,
			want: []string{path + `: apiVersion "" kind "Deployment"`}},
		{name: "template beside workloadRef", stream: rolloutWith("metadata: {name: web, namespace: shop}",
			"  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  template:\n    metadata: {labels: {team: shop}}\n", canary("", pauseSteps)) + deploy,
			want: []string{"spec.template: the Rollout has both workloadRef and a pod template"}},

		{name: "Deployment in the render", stream: ref("{apiVersion: apps/v1, kind: Deployment, name: web, scaleDown: progressively}") + deploy},
		{name: "ReplicaSet", stream: ref("{apiVersion: apps/v1, kind: ReplicaSet, name: web}") + "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: shop}\n"},
		{name: "PodTemplate", stream: ref("{apiVersion: v1, kind: PodTemplate, name: web}") + "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: web, namespace: shop}\n"},
		{name: "empty template beside workloadRef", stream: rolloutWith("metadata: {name: web, namespace: shop}",
			"  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  template: {metadata: {}, spec: {containers: null}}\n", canary("", pauseSteps)) + deploy},
		{name: "no workloadRef", stream: rollout(canary("", pauseSteps))},
	})
}
