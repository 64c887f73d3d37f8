package rollouts_test

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/rules/rollouts"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

func TestRolloutAnalysisRef(t *testing.T) {
	const (
		at       = "AnalysisTemplate"
		cat      = "ClusterAnalysisTemplate"
		needsArg = "[{name: service-name}]"
		noArgs   = "[]"
	)
	step := func(a string) string { return rollout(canary("", "setWeight: 20", "analysis: "+a)) }
	bg := func(s string) string {
		return rollout("blueGreen:\n  activeService: web-active\n  previewService: web-preview\n  autoPromotionEnabled: false\n" + indent(s, 2))
	}
	ruletest.Run(t, rollouts.AnalysisRef, []ruletest.Case{
		{Name: "misspelled step template", Input: step("{templates: [{templateName: sucess-rate}]}") + template(at, "success-rate", noArgs),
			Want: []string{steps + `[1].analysis.templates[0]: AnalysisTemplate "sucess-rate" is not in the render in namespace shop: the controller marks the Rollout InvalidSpec`}},
		{Name: "clusterScope looks for a ClusterAnalysisTemplate", Input: step("{templates: [{templateName: success-rate, clusterScope: true}]}") + template(at, "success-rate", noArgs),
			Want: []string{steps + `[1].analysis.templates[0]: ClusterAnalysisTemplate "success-rate" is not in the render (clusterScope: true`}},
		{Name: "template in another namespace", Input: step("{templates: [{templateName: success-rate}]}") +
			"apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: success-rate, namespace: monitoring}\nspec: {metrics: []}\n",
			Want: []string{steps + "[1].analysis.templates[0]: is not in the render in namespace shop"}},
		{Name: "background analysis", Input: rollout(canary("analysis: {startingStep: 1, templates: [{templateName: error-rate}]}", pauseSteps)),
			Want: []string{canaryPath + `.analysis.templates[0]: AnalysisTemplate "error-rate" is not in the render`}},
		{Name: "pre and post promotion", Input: bg("prePromotionAnalysis: {templates: [{templateName: smoke}]}\npostPromotionAnalysis: {templates: [{templateName: soak}]}"),
			Want: []string{bgPath + `.prePromotionAnalysis.templates[0]: "smoke"`, bgPath + `.postPromotionAnalysis.templates[0]: "soak"`}},
		{Name: "experiment analyses", Input: rollout(canary("", "setWeight: 20", "experiment: {templates: [{name: c, specRef: canary}], analyses: [{name: a, templateName: load-test}]}")),
			Want: []string{steps + `[1].experiment.analyses[0].templateName: AnalysisTemplate "load-test" is not in the render in namespace shop: the experiment step fails when it runs`}},
		{Name: "nested template missing", Input: step("{templates: [{templateName: success-rate}]}") +
			"apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: success-rate, namespace: shop}\nspec: {templates: [{templateName: latency}]}\n",
			Want: []string{steps + `[1].analysis.templates[0]: AnalysisTemplate "latency" (nested in AnalysisTemplate/success-rate) is not in the render`}},
		{Name: "empty templateName", Input: step("{templates: [{clusterScope: false}]}"),
			Want: []string{steps + "[1].analysis.templates[0]: templateName is empty"}},
		{Name: "arg the Rollout does not pass", Input: step("{templates: [{templateName: success-rate}]}") + template(at, "success-rate", needsArg),
			Want: []string{steps + `[1].analysis.args: AnalysisTemplate/success-rate declares arg "service-name" with no value or valueFrom, and ` + steps + "[1].analysis.args does not pass it"}},
		{Name: "arg passed under another name", Input: step("{templates: [{templateName: success-rate}], args: [{name: service, value: web}]}") + template(at, "success-rate", needsArg),
			Want: []string{steps + `[1].analysis.args: arg "service-name"`}},
		{Name: "background arg missing", Input: rollout(canary("analysis: {templates: [{templateName: success-rate}]}", pauseSteps)) + template(at, "success-rate", needsArg),
			Want: []string{canaryPath + ".analysis.args: args.service-name was not resolved"}},
		{Name: "experiment arg missing", Input: rollout(canary("", "setWeight: 20", "experiment: {templates: [{name: c, specRef: canary}], analyses: [{name: a, templateName: success-rate}]}")) + template(at, "success-rate", needsArg),
			Want: []string{steps + "[1].experiment.analyses[0].args: the experiment step fails"}},
		{Name: "standalone Experiment names a missing template", Input: experimentObj("[{name: a, templateName: load-test}]") + template(at, "success-rate", noArgs),
			Want: []string{`spec.analyses[0].templateName: AnalysisTemplate "load-test" is not in the render in namespace shop: the Experiment fails when it starts its analysis`}},
		{Name: "standalone Experiment with its template", Input: experimentObj("[{name: a, templateName: success-rate, args: [{name: service-name, value: web}]}]") + template(at, "success-rate", needsArg)},
		{Name: "standalone Experiment misses an arg", Input: experimentObj("[{name: a, templateName: success-rate}]") + template(at, "success-rate", needsArg),
			Want: []string{"spec.analyses[0].args: args.service-name was not resolved"}},
		{Name: "unreadable analysis", Input: rollout(canary("analysis: {templates: {templateName: x}}", pauseSteps)),
			Want: []string{canaryPath + ": cannot check"}},

		{Name: "step template present", Input: step("{templates: [{templateName: success-rate}]}") + template(at, "success-rate", noArgs)},
		{Name: "cluster template present", Input: step("{templates: [{templateName: success-rate, clusterScope: true}]}") + template(cat, "success-rate", noArgs)},
		{Name: "arg passed by value", Input: step("{templates: [{templateName: success-rate}], args: [{name: service-name, value: web-canary}]}") + template(at, "success-rate", needsArg)},
		{Name: "arg passed from the pod template hash", Input: step("{templates: [{templateName: success-rate}], args: [{name: service-name, valueFrom: {podTemplateHashValue: Latest}}]}") + template(at, "success-rate", needsArg)},
		// value: "" is still a value: the controller sets every listed arg.
		{Name: "arg passed empty", Input: step(`{templates: [{templateName: success-rate}], args: [{name: service-name, value: ""}]}`) + template(at, "success-rate", needsArg)},
		{Name: "arg with a default", Input: step("{templates: [{templateName: success-rate}]}") + template(at, "success-rate", "[{name: service-name, value: web}]")},
		{Name: "arg from a secret", Input: step("{templates: [{templateName: success-rate}]}") + template(at, "success-rate", "[{name: service-name, valueFrom: {secretKeyRef: {name: s, key: k}}}]")},
		// flattenArgs: a value from one template resolves the same arg of another.
		{Name: "arg resolved by a sibling template", Input: step("{templates: [{templateName: success-rate}, {templateName: latency}]}") +
			template(at, "success-rate", needsArg) + template(at, "latency", "[{name: service-name, value: web}]")},
		{Name: "nested templates present", Input: step("{templates: [{templateName: all}]}") + template(at, "success-rate", noArgs) +
			"apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: all, namespace: shop}\nspec: {templates: [{templateName: success-rate}, {templateName: all}]}\n"},
		{Name: "no analysis at all", Input: rollout(canary("", pauseSteps))},
	})
}

// experimentObj is a standalone Experiment in namespace shop with the given
// analyses, in flow YAML.
func experimentObj(analyses string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: Experiment
metadata: {name: web-load, namespace: shop}
spec:
  duration: 10m
  templates:
  - name: canary
    selector: {matchLabels: {app: web, variant: load}}
    template:
      metadata: {labels: {app: web, variant: load}}
      spec:
        containers: [{name: web, image: "` + webImage + `"}]
  analyses: ` + analyses + `
---
`
}
