package rules_test

import "testing"

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
	runCases(t, "rollout-analysis-ref", []ruleCase{
		{name: "misspelled step template", stream: step("{templates: [{templateName: sucess-rate}]}") + template(at, "success-rate", noArgs),
			want: []string{steps + `[1].analysis.templates[0]: AnalysisTemplate "sucess-rate" is not in the render in namespace shop: the controller marks the Rollout InvalidSpec`}},
		{name: "clusterScope looks for a ClusterAnalysisTemplate", stream: step("{templates: [{templateName: success-rate, clusterScope: true}]}") + template(at, "success-rate", noArgs),
			want: []string{steps + `[1].analysis.templates[0]: ClusterAnalysisTemplate "success-rate" is not in the render (clusterScope: true`}},
		{name: "template in another namespace", stream: step("{templates: [{templateName: success-rate}]}") +
			"apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: success-rate, namespace: monitoring}\nspec: {metrics: []}\n",
			want: []string{steps + "[1].analysis.templates[0]: is not in the render in namespace shop"}},
		{name: "background analysis", stream: rollout(canary("analysis: {startingStep: 1, templates: [{templateName: error-rate}]}", pauseSteps)),
			want: []string{canaryPath + `.analysis.templates[0]: AnalysisTemplate "error-rate" is not in the render`}},
		{name: "pre and post promotion", stream: bg("prePromotionAnalysis: {templates: [{templateName: smoke}]}\npostPromotionAnalysis: {templates: [{templateName: soak}]}"),
			want: []string{bgPath + `.prePromotionAnalysis.templates[0]: "smoke"`, bgPath + `.postPromotionAnalysis.templates[0]: "soak"`}},
		{name: "experiment analyses", stream: rollout(canary("", "setWeight: 20", "experiment: {templates: [{name: c, specRef: canary}], analyses: [{name: a, templateName: load-test}]}")),
			want: []string{steps + `[1].experiment.analyses[0].templateName: AnalysisTemplate "load-test" is not in the render in namespace shop: the experiment step fails when it runs`}},
		{name: "nested template missing", stream: step("{templates: [{templateName: success-rate}]}") +
			"apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: success-rate, namespace: shop}\nspec: {templates: [{templateName: latency}]}\n",
			want: []string{steps + `[1].analysis.templates[0]: AnalysisTemplate "latency" (nested in AnalysisTemplate/success-rate) is not in the render`}},
		{name: "empty templateName", stream: step("{templates: [{clusterScope: false}]}"),
			want: []string{steps + "[1].analysis.templates[0]: templateName is empty"}},
		{name: "arg the Rollout does not pass", stream: step("{templates: [{templateName: success-rate}]}") + template(at, "success-rate", needsArg),
			want: []string{steps + `[1].analysis.args: AnalysisTemplate/success-rate declares arg "service-name" with no value or valueFrom, and ` + steps + "[1].analysis.args does not pass it"}},
		{name: "arg passed under another name", stream: step("{templates: [{templateName: success-rate}], args: [{name: service, value: web}]}") + template(at, "success-rate", needsArg),
			want: []string{steps + `[1].analysis.args: arg "service-name"`}},
		{name: "background arg missing", stream: rollout(canary("analysis: {templates: [{templateName: success-rate}]}", pauseSteps)) + template(at, "success-rate", needsArg),
			want: []string{canaryPath + ".analysis.args: args.service-name was not resolved"}},
		{name: "experiment arg missing", stream: rollout(canary("", "setWeight: 20", "experiment: {templates: [{name: c, specRef: canary}], analyses: [{name: a, templateName: success-rate}]}")) + template(at, "success-rate", needsArg),
			want: []string{steps + "[1].experiment.analyses[0].args: the experiment step fails"}},
		{name: "unreadable analysis", stream: rollout(canary("analysis: {templates: {templateName: x}}", pauseSteps)),
			want: []string{canaryPath + ": cannot check"}},

		{name: "step template present", stream: step("{templates: [{templateName: success-rate}]}") + template(at, "success-rate", noArgs)},
		{name: "cluster template present", stream: step("{templates: [{templateName: success-rate, clusterScope: true}]}") + template(cat, "success-rate", noArgs)},
		{name: "arg passed by value", stream: step("{templates: [{templateName: success-rate}], args: [{name: service-name, value: web-canary}]}") + template(at, "success-rate", needsArg)},
		{name: "arg passed from the pod template hash", stream: step("{templates: [{templateName: success-rate}], args: [{name: service-name, valueFrom: {podTemplateHashValue: Latest}}]}") + template(at, "success-rate", needsArg)},
		// value: "" is still a value: the controller sets every listed arg.
		{name: "arg passed empty", stream: step(`{templates: [{templateName: success-rate}], args: [{name: service-name, value: ""}]}`) + template(at, "success-rate", needsArg)},
		{name: "arg with a default", stream: step("{templates: [{templateName: success-rate}]}") + template(at, "success-rate", "[{name: service-name, value: web}]")},
		{name: "arg from a secret", stream: step("{templates: [{templateName: success-rate}]}") + template(at, "success-rate", "[{name: service-name, valueFrom: {secretKeyRef: {name: s, key: k}}}]")},
		// flattenArgs: a value from one template resolves the same arg of another.
		{name: "arg resolved by a sibling template", stream: step("{templates: [{templateName: success-rate}, {templateName: latency}]}") +
			template(at, "success-rate", needsArg) + template(at, "latency", "[{name: service-name, value: web}]")},
		{name: "nested templates present", stream: step("{templates: [{templateName: all}]}") + template(at, "success-rate", noArgs) +
			"apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: all, namespace: shop}\nspec: {templates: [{templateName: success-rate}, {templateName: all}]}\n"},
		{name: "no analysis at all", stream: rollout(canary("", pauseSteps))},
	})
}
