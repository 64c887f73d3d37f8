package rules

// rolloutRules are the Argo Rollouts rules (SPEC §5.3). Each is judged as
// the Argo Rollouts v1.10 controller sees the Rollout; where that differs
// from SPEC §5.3 the rule's Doc says so and the check function's comment
// says why.
var rolloutRules = []Rule{
	{
		ID: "rollout-canary-pause", Default: SeverityError, Family: "rollouts",
		Doc:      "a canary setWeight below 100 has no pause (any duration but 0), analysis or experiment step before the next setWeight or the end of the steps; or the canary has no steps, or no such step at all",
		Outage:   "setWeight: 10 → setWeight: 100 is a slow full rollout: a bad version reaches every user before anyone or anything looks at it",
		Mutation: "remove the pause, analysis and experiment steps of a canary",
		Check:    checkCanaryPause,
	},
	{
		ID: "rollout-canary-services", Default: SeverityError, Family: "rollouts",
		Doc:      "canaryService/stableService (pingService/pongService with pingPong) are the same Service, are not in the render (same namespace), are named by another Rollout too, or are missing where trafficRouting needs them (a basic canary without trafficRouting may omit them)",
		Outage:   "the controller marks the Rollout InvalidSpec mid-deploy, or canary and stable get the same traffic and the canary is never really tested",
		Mutation: "point canaryService at stableService",
		Check:    checkCanaryServices,
	},
	{
		ID: "rollout-bluegreen-services", Default: SeverityError, Family: "rollouts",
		Doc:      "activeService or previewService is missing, they are the same Service, either is not in the render (same namespace), or another Rollout names it too",
		Outage:   "the Rollout is InvalidSpec, or the new version takes no traffic before promotion and nobody can test it",
		Mutation: "point previewService at activeService",
		Check:    checkBlueGreenServices,
	},
	{
		ID: "rollout-bluegreen-autopromotion", Default: SeverityError, Family: "rollouts",
		Doc:      "a blue/green promotes itself: autoPromotionEnabled is not explicitly false and no prePromotionAnalysis gates the promotion",
		Outage:   "a blue/green switches all production traffic to the new version as soon as it is ready, untested",
		Mutation: "flip autoPromotionEnabled to true and drop prePromotionAnalysis",
		Check:    checkAutoPromotion,
	},
	{
		ID: "rollout-single-writer", Default: SeverityWarning, Family: "rollouts",
		Doc:      "a Rollout annotated kubectl-gate.dev/single-writer: \"true\" runs two versions at once (blue/green preview, canary); names what to verify (write control, schema compatibility, recovery) until kubectl-gate.dev/single-writer-verified is set",
		Outage:   "the preview of a ledger-like service writes beside the active one during start-up and background work, and corrupts state",
		Mutation: "drop the single-writer-verified annotation",
		Check:    checkSingleWriter,
	},
	{
		ID: "rollout-analysis-ref", Default: SeverityError, Family: "rollouts",
		Doc:      "an AnalysisTemplate (same namespace) or ClusterAnalysisTemplate (clusterScope: true) referenced from canary steps, background analysis, pre/postPromotionAnalysis, experiment analyses or a template's nested templates is not in the render, or a template arg without value/valueFrom is not passed",
		Outage:   "a typo in a template name or a missing arg surfaces only at deploy time: the Rollout goes InvalidSpec, or the experiment fails, mid-rollout",
		Mutation: "misspell an AnalysisTemplate name",
		Check:    checkAnalysisRef,
	},
	{
		ID: "rollout-service-selector", Default: SeverityError, Family: "rollouts",
		Doc:      "a Service the Rollout names (canary, stable, ping, pong, active, preview, ALB/SMI root) does not select the pod template labels (of the workloadRef target too); rollouts-pod-template-hash is ignored",
		Outage:   "the Service selects none of the Rollout's pods: traffic goes nowhere, and the controller marks the Rollout InvalidSpec",
		Mutation: "break a Service selector",
		Check:    checkServiceSelector,
	},
	{
		ID: "rollout-workload-ref", Default: SeverityError, Family: "rollouts",
		Doc:      "workloadRef names a Deployment (or ReplicaSet, PodTemplate) that is not in the render (same namespace), a kind the controller does not support, or the Rollout also has its own template",
		Outage:   "the Rollout has no pod template: the controller creates no pods and the deploy never starts, while the sync shows green",
		Mutation: "rename the workloadRef target",
		Check:    checkWorkloadRef,
	},
}
