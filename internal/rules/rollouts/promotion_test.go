package rollouts_test

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/rollouts"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

func TestRolloutBlueGreenAutoPromotion(t *testing.T) {
	bg := func(s string) string {
		return rollout("blueGreen:\n  activeService: web-active\n  previewService: web-preview\n" + indent(s, 2))
	}
	const path = bgPath + ".autoPromotionEnabled"
	ruletest.Run(t, rollouts.BlueGreenAutoPromotion, []ruletest.Case{
		{Name: "not set defaults to true", Input: bg(""),
			Want: []string{path + ": autoPromotionEnabled is not set (it defaults to true) and no prePromotionAnalysis gates the promotion, so the new version takes all production traffic as soon as it is ready"}},
		{Name: "explicitly true", Input: bg("autoPromotionEnabled: true"),
			Want: []string{path + ": autoPromotionEnabled is true"}},
		{Name: "delayed self-promotion is still self-promotion", Input: bg("autoPromotionSeconds: 300"),
			Want: []string{path + ": 300 s after it is ready (autoPromotionSeconds), watched or not"}},
		{Name: "prePromotionAnalysis without templates", Input: bg("prePromotionAnalysis: {templates: []}"),
			Want: []string{path + ": no prePromotionAnalysis gates the promotion"}},
		{Name: "postPromotionAnalysis runs after the switch", Input: bg("postPromotionAnalysis: {templates: [{templateName: soak}]}"),
			Want: []string{path + ": no prePromotionAnalysis"}},

		{Name: "manual promotion", Input: bg("autoPromotionEnabled: false")},
		{Name: "manual promotion, quoted", Input: bg(`autoPromotionEnabled: "false"`)},
		{Name: "prePromotionAnalysis gates it", Input: bg("prePromotionAnalysis: {templates: [{templateName: smoke}]}")},
		{Name: "canary has no auto-promotion", Input: rollout(canary("", pauseSteps))},
	})
}

func TestRolloutSingleWriter(t *testing.T) {
	meta := func(annos string) string {
		return "metadata:\n  name: ledger\n  namespace: shop\n  annotations: " + annos
	}
	bg := "blueGreen: {activeService: a, previewService: p, autoPromotionEnabled: false}"
	const path = "metadata.annotations." + rollouts.AnnoSingleWriter
	ruletest.Run(t, rollouts.SingleWriter, []ruletest.Case{
		{Name: "blue/green single writer", Input: rolloutWith(meta(`{kubectl-gate.dev/single-writer: "true"}`), podTemplate, bg),
			Want: []string{path + ": the preview ReplicaSet next to the active one before promotion (start-up, migrations, background work all run)"}},
		{Name: "names what to verify", Input: rolloutWith(meta(`{kubectl-gate.dev/single-writer: "true"}`), podTemplate, bg),
			Want: []string{path + ": Verify separately: write control (only one version writes: leader election, a lock or a fencing token), schema compatibility (old and new versions read and write the same store), recovery"}},
		{Name: "canary single writer", Input: rolloutWith(meta(`{kubectl-gate.dev/single-writer: "true"}`), podTemplate, canary("", pauseSteps)),
			Want: []string{path + ": both taking traffic"}},

		{Name: "verified", Input: rolloutWith(meta(`{kubectl-gate.dev/single-writer: "true", kubectl-gate.dev/single-writer-verified: "OPS-1234"}`), podTemplate, bg)},
		{Name: "not a single writer", Input: rolloutWith(meta(`{kubectl-gate.dev/single-writer: "false"}`), podTemplate, bg)},
		{Name: "no annotation", Input: rollout(bg)},
	})
	got := checkRule(t, "rollout-single-writer", rolloutWith(meta(`{kubectl-gate.dev/single-writer: "true"}`), podTemplate, bg))
	if len(got) != 1 || got[0].Severity != finding.SeverityWarning {
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
	ruletest.Run(t, rollouts.WorkloadRef, []ruletest.Case{
		{Name: "renamed Deployment", Input: ref("{apiVersion: apps/v1, kind: Deployment, name: web-v2}") + deploy,
			Want: []string{path + `.name: workloadRef names Deployment "web-v2", which is not in the render (namespace shop): the Rollout has no pod template`}},
		{Name: "Deployment in another namespace", Input: ref("{apiVersion: apps/v1, kind: Deployment, name: web}") +
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: other}\n",
			Want: []string{path + ".name: is not in the render"}},
		{Name: "unsupported kind", Input: ref("{apiVersion: apps/v1, kind: StatefulSet, name: web}"),
			Want: []string{path + `: workloadRef names apiVersion "apps/v1" kind "StatefulSet"`}},
		{Name: "no apiVersion", Input: ref("{kind: Deployment, name: web}") + deploy,
			Want: []string{path + `: apiVersion "" kind "Deployment"`}},
		{Name: "template beside workloadRef", Input: rolloutWith("metadata: {name: web, namespace: shop}",
			"  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  template:\n    metadata: {labels: {team: shop}}\n", canary("", pauseSteps)) + deploy,
			Want: []string{"spec.template: the Rollout has both workloadRef and a pod template"}},

		{Name: "Deployment in the render", Input: ref("{apiVersion: apps/v1, kind: Deployment, name: web, scaleDown: progressively}") + deploy},
		{Name: "ReplicaSet", Input: ref("{apiVersion: apps/v1, kind: ReplicaSet, name: web}") + "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: shop}\n"},
		{Name: "PodTemplate", Input: ref("{apiVersion: v1, kind: PodTemplate, name: web}") + "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: web, namespace: shop}\n"},
		{Name: "empty template beside workloadRef", Input: rolloutWith("metadata: {name: web, namespace: shop}",
			"  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  template: {metadata: {}, spec: {containers: null}}\n", canary("", pauseSteps)) + deploy},
		{Name: "no workloadRef", Input: rollout(canary("", pauseSteps))},
	})
}
