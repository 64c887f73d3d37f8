package rules_test

import "testing"

const (
	canaryPath = "spec.strategy.canary"
	bgPath     = "spec.strategy.blueGreen"
	pauseSteps = "setWeight: 20\n  - pause: {}"
)

func TestRolloutCanaryServices(t *testing.T) {
	pair := "canaryService: web-canary\nstableService: web-stable\n"
	nginx := "trafficRouting: {nginx: {stableIngress: web}}"
	runCases(t, "rollout-canary-services", []ruleCase{
		{name: "nginx without services", stream: rollout(canary(nginx, pauseSteps)),
			want: []string{canaryPath + ".canaryService: canaryService is not set: this trafficRouting", canaryPath + ".stableService: stableService is not set"}},
		{name: "alb without canaryService", stream: rollout(canary("stableService: web-stable\ntrafficRouting: {alb: {ingress: web, servicePort: 80}}", pauseSteps)) + webServices,
			want: []string{canaryPath + ".canaryService: canaryService is not set"}},
		{name: "plugin router without services", stream: rollout(canary("trafficRouting: {plugins: {argoproj-labs/gatewayAPI: {httpRoute: web}}}", pauseSteps)),
			want: []string{canaryPath + ".canaryService: is not set", canaryPath + ".stableService: is not set"}},
		{name: "canary points at stable", stream: rollout(canary("canaryService: web-stable\nstableService: web-stable\n"+nginx, pauseSteps)) + webServices,
			want: []string{canaryPath + ".stableService: canaryService and stableService are the same Service \"web-stable\""}},
		{name: "services missing from the render", stream: rollout(canary(pair+nginx, pauseSteps)),
			want: []string{canaryPath + `.canaryService: canaryService "web-canary" is not in the render (namespace shop)`, canaryPath + `.stableService: stableService "web-stable" is not in the render`}},
		{name: "services in another namespace", stream: rollout(canary(pair, pauseSteps)) +
			"apiVersion: v1\nkind: Service\nmetadata: {name: web-canary, namespace: other}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web-stable}\n",
			want: []string{canaryPath + ".canaryService: is not in the render", canaryPath + ".stableService: is not in the render"}},
		{name: "a knative Service is not a Service", stream: rollout(canary("canaryService: web-canary", pauseSteps)) +
			"apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: web-canary, namespace: shop}\n",
			want: []string{canaryPath + ".canaryService: is not in the render"}},
		{name: "pingPong without pongService", stream: rollout(canary("pingPong: {pingService: web-ping}\ntrafficRouting: {alb: {ingress: web, rootService: web}}", pauseSteps)) +
			service("web-ping", "{app: web}"),
			want: []string{canaryPath + ".pingPong.pongService: pongService is not set: pingPong needs both"}},
		{name: "two Rollouts share a Service", stream: rollout(canary(pair, pauseSteps)) + webServices +
			rolloutWith("metadata: {name: api, namespace: shop}", podTemplate, canary("canaryService: web-canary", pauseSteps)),
			want: []string{canaryPath + `.canaryService: Service "web-canary" is also named by Rollout/api`, canaryPath + `.canaryService: Service "web-canary" is also named by Rollout/web`}},

		{name: "basic canary without services", stream: rollout(canary("", pauseSteps))},
		{name: "basic canary with a canaryService only", stream: rollout(canary("canaryService: web-canary", pauseSteps)) + webServices},
		{name: "nginx with both services", stream: rollout(canary(pair+nginx, pauseSteps)) + webServices},
		{name: "istio subset split needs no services", stream: rollout(canary("trafficRouting: {istio: {virtualService: {name: web}, destinationRule: {name: web, canarySubsetName: c, stableSubsetName: s}}}", pauseSteps))},
		{name: "alb ping-pong needs no canary/stable", stream: rollout(canary("pingPong: {pingService: web-canary, pongService: web-stable}\ntrafficRouting: {alb: {ingress: web, rootService: web}}", pauseSteps)) + webServices},
		{name: "no namespace matches no namespace", stream: rolloutWith("metadata: {name: web}", podTemplate, canary(pair+nginx, pauseSteps)) +
			"apiVersion: v1\nkind: Service\nmetadata: {name: web-canary}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web-stable}\n"},
	})
}

func TestRolloutBlueGreenServices(t *testing.T) {
	bg := func(s string) string { return rollout("blueGreen:\n  autoPromotionEnabled: false\n" + indent(s, 2)) }
	both := service("web-active", "{app: web}") + service("web-preview", "{app: web}")
	runCases(t, "rollout-bluegreen-services", []ruleCase{
		{name: "no preview service", stream: bg("activeService: web-active") + both,
			want: []string{bgPath + ".previewService: previewService is not set: without a preview Service the new version takes no traffic"}},
		{name: "no services at all", stream: bg("scaleDownDelaySeconds: 30"),
			want: []string{bgPath + ".activeService: activeService is not set", bgPath + ".previewService: previewService is not set"}},
		{name: "preview points at active", stream: bg("activeService: web-active\npreviewService: web-active") + both,
			want: []string{bgPath + `.previewService: activeService and previewService are the same Service "web-active"`}},
		{name: "preview missing from the render", stream: bg("activeService: web-active\npreviewService: web-preveiw") + both,
			want: []string{bgPath + `.previewService: previewService "web-preveiw" is not in the render (namespace shop)`}},
		{name: "unreadable strategy", stream: rollout("blueGreen: [activeService]"),
			want: []string{bgPath + ": cannot check"}},

		{name: "both services in the render", stream: bg("activeService: web-active\npreviewService: web-preview") + both},
		{name: "canary is not blue/green", stream: rollout(canary("", pauseSteps))},
	})
}

func TestRolloutServiceSelector(t *testing.T) {
	pair := "canaryService: web-canary\nstableService: web-stable\ntrafficRouting: {smi: {rootService: web}}"
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 0\n  selector: {matchLabels: {app: web}}\n" +
		"  template:\n    metadata: {labels: {app: web, version: \"2\"}}\n    spec: {containers: [{name: web, image: \"" + webImage + "\"}]}\n---\n"
	viaRef := rolloutWith("metadata: {name: web, namespace: shop}", "  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n", canary(pair, pauseSteps))
	runCases(t, "rollout-service-selector", []ruleCase{
		{name: "canary selector typo", stream: rollout(canary(pair, pauseSteps)) + service("web-canary", "{app: wbe}") + service("web-stable", "{app: web}") + service("web", "{app: web}"),
			want: []string{"spec.selector: Service \"web-canary\" is the canaryService of Rollout/web but does not select its pods: selector app=wbe but the label is app=web"}},
		{name: "label the template lacks", stream: rollout(canary(pair, pauseSteps)) + service("web-canary", "{app: web}") + service("web-stable", "{app: web, track: stable}") + service("web", "{app: web}"),
			want: []string{"spec.selector: selector track=stable has no label track"}},
		{name: "root service", stream: rollout(canary(pair, pauseSteps)) + webServices + service("web", "{app: web-root}"),
			want: []string{"spec.selector: is the smi.rootService of Rollout/web"}},
		{name: "preview of a blue/green", stream: rollout("blueGreen: {activeService: web-active, previewService: web-preview}") + service("web-active", "{app: web}") + service("web-preview", "{app: web-preview}"),
			want: []string{"spec.selector: is the previewService of Rollout/web"}},
		{name: "workloadRef labels come from the Deployment", stream: viaRef + deploy + service("web-canary", "{app: web, version: \"1\"}") + service("web-stable", "{app: web}"),
			want: []string{"spec.selector: selector version=1 but the label is version=2 in the pod template of Rollout/web (from Deployment/web)"}},

		{name: "hash label is the controller's", stream: rollout(canary(pair, pauseSteps)) + webServices + service("web", "{app: web, tier: front}")},
		{name: "workloadRef labels match", stream: viaRef + deploy + webServices},
		{name: "missing Service is the services rules' finding", stream: rollout(canary(pair, pauseSteps))},
		{name: "missing workloadRef target is rollout-workload-ref's", stream: viaRef + service("web-canary", "{app: nothing}")},
	})
}
