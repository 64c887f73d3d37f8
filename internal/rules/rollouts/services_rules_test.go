package rollouts_test

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/rules/rollouts"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

const (
	canaryPath = "spec.strategy.canary"
	bgPath     = "spec.strategy.blueGreen"
	pauseSteps = "setWeight: 20\n  - pause: {}"
)

func TestRolloutCanaryServices(t *testing.T) {
	pair := "canaryService: web-canary\nstableService: web-stable\n"
	nginx := "trafficRouting: {nginx: {stableIngress: web}}"
	ruletest.Run(t, rollouts.CanaryServices, []ruletest.Case{
		{Name: "nginx without services", Input: rollout(canary(nginx, pauseSteps)),
			Want: []string{canaryPath + ".canaryService: canaryService is not set: this trafficRouting", canaryPath + ".stableService: stableService is not set"}},
		{Name: "alb without canaryService", Input: rollout(canary("stableService: web-stable\ntrafficRouting: {alb: {ingress: web, servicePort: 80}}", pauseSteps)) + webServices,
			Want: []string{canaryPath + ".canaryService: canaryService is not set"}},
		{Name: "plugin router without services", Input: rollout(canary("trafficRouting: {plugins: {argoproj-labs/gatewayAPI: {httpRoute: web}}}", pauseSteps)),
			Want: []string{canaryPath + ".canaryService: is not set", canaryPath + ".stableService: is not set"}},
		{Name: "canary points at stable", Input: rollout(canary("canaryService: web-stable\nstableService: web-stable\n"+nginx, pauseSteps)) + webServices,
			Want: []string{canaryPath + ".stableService: canaryService and stableService are the same Service \"web-stable\""}},
		{Name: "services missing from the render", Input: rollout(canary(pair+nginx, pauseSteps)),
			Want: []string{canaryPath + `.canaryService: canaryService "web-canary" is not in the render (namespace shop)`, canaryPath + `.stableService: stableService "web-stable" is not in the render`}},
		{Name: "services in another namespace", Input: rollout(canary(pair, pauseSteps)) +
			"apiVersion: v1\nkind: Service\nmetadata: {name: web-canary, namespace: other}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web-stable}\n",
			Want: []string{canaryPath + ".canaryService: is not in the render", canaryPath + ".stableService: is not in the render"}},
		{Name: "a knative Service is not a Service", Input: rollout(canary("canaryService: web-canary", pauseSteps)) +
			"apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: web-canary, namespace: shop}\n",
			Want: []string{canaryPath + ".canaryService: is not in the render"}},
		{Name: "pingPong without pongService", Input: rollout(canary("pingPong: {pingService: web-ping}\ntrafficRouting: {alb: {ingress: web, rootService: web}}", pauseSteps)) +
			service("web-ping", "{app: web}"),
			Want: []string{canaryPath + ".pingPong.pongService: pongService is not set: pingPong needs both"}},
		{Name: "two Rollouts share a Service", Input: rollout(canary(pair, pauseSteps)) + webServices +
			rolloutWith("metadata: {name: api, namespace: shop}", podTemplate, canary("canaryService: web-canary", pauseSteps)),
			Want: []string{canaryPath + `.canaryService: Service "web-canary" is also named by Rollout/api`, canaryPath + `.canaryService: Service "web-canary" is also named by Rollout/web`}},

		{Name: "basic canary without services", Input: rollout(canary("", pauseSteps))},
		{Name: "basic canary with a canaryService only", Input: rollout(canary("canaryService: web-canary", pauseSteps)) + webServices},
		{Name: "nginx with both services", Input: rollout(canary(pair+nginx, pauseSteps)) + webServices},
		{Name: "istio subset split needs no services", Input: rollout(canary("trafficRouting: {istio: {virtualService: {name: web}, destinationRule: {name: web, canarySubsetName: c, stableSubsetName: s}}}", pauseSteps))},
		{Name: "alb ping-pong needs no canary/stable", Input: rollout(canary("pingPong: {pingService: web-canary, pongService: web-stable}\ntrafficRouting: {alb: {ingress: web, rootService: web}}", pauseSteps)) + webServices},
		{Name: "no namespace matches no namespace", Input: rolloutWith("metadata: {name: web}", podTemplate, canary(pair+nginx, pauseSteps)) +
			"apiVersion: v1\nkind: Service\nmetadata: {name: web-canary}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web-stable}\n"},
	})
}

func TestRolloutBlueGreenServices(t *testing.T) {
	bg := func(s string) string { return rollout("blueGreen:\n  autoPromotionEnabled: false\n" + indent(s, 2)) }
	both := service("web-active", "{app: web}") + service("web-preview", "{app: web}")
	ruletest.Run(t, rollouts.BlueGreenServices, []ruletest.Case{
		{Name: "no preview service", Input: bg("activeService: web-active") + both,
			Want: []string{bgPath + ".previewService: previewService is not set: without a preview Service the new version takes no traffic"}},
		{Name: "no services at all", Input: bg("scaleDownDelaySeconds: 30"),
			Want: []string{bgPath + ".activeService: activeService is not set", bgPath + ".previewService: previewService is not set"}},
		{Name: "preview points at active", Input: bg("activeService: web-active\npreviewService: web-active") + both,
			Want: []string{bgPath + `.previewService: activeService and previewService are the same Service "web-active"`}},
		{Name: "preview missing from the render", Input: bg("activeService: web-active\npreviewService: web-preveiw") + both,
			Want: []string{bgPath + `.previewService: previewService "web-preveiw" is not in the render (namespace shop)`}},
		{Name: "unreadable strategy", Input: rollout("blueGreen: [activeService]"),
			Want: []string{bgPath + ": cannot check"}},

		{Name: "both services in the render", Input: bg("activeService: web-active\npreviewService: web-preview") + both},
		{Name: "canary is not blue/green", Input: rollout(canary("", pauseSteps))},
	})
}

func TestRolloutServiceSelector(t *testing.T) {
	pair := "canaryService: web-canary\nstableService: web-stable\ntrafficRouting: {smi: {rootService: web}}"
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 0\n  selector: {matchLabels: {app: web}}\n" +
		"  template:\n    metadata: {labels: {app: web, version: \"2\"}}\n    spec: {containers: [{name: web, image: \"" + webImage + "\"}]}\n---\n"
	viaRef := rolloutWith("metadata: {name: web, namespace: shop}", "  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n", canary(pair, pauseSteps))
	ruletest.Run(t, rollouts.ServiceSelector, []ruletest.Case{
		{Name: "canary selector typo", Input: rollout(canary(pair, pauseSteps)) + service("web-canary", "{app: wbe}") + service("web-stable", "{app: web}") + service("web", "{app: web}"),
			Want: []string{"spec.selector: Service \"web-canary\" is the canaryService of Rollout/web but does not select its pods: selector app=wbe but the label is app=web"}},
		{Name: "label the template lacks", Input: rollout(canary(pair, pauseSteps)) + service("web-canary", "{app: web}") + service("web-stable", "{app: web, track: stable}") + service("web", "{app: web}"),
			Want: []string{"spec.selector: selector track=stable has no label track"}},
		{Name: "root service", Input: rollout(canary(pair, pauseSteps)) + webServices + service("web", "{app: web-root}"),
			Want: []string{"spec.selector: is the smi.rootService of Rollout/web"}},
		{Name: "preview of a blue/green", Input: rollout("blueGreen: {activeService: web-active, previewService: web-preview}") + service("web-active", "{app: web}") + service("web-preview", "{app: web-preview}"),
			Want: []string{"spec.selector: is the previewService of Rollout/web"}},
		{Name: "workloadRef labels come from the Deployment", Input: viaRef + deploy + service("web-canary", "{app: web, version: \"1\"}") + service("web-stable", "{app: web}"),
			Want: []string{"spec.selector: selector version=1 but the label is version=2 in the pod template of Rollout/web (from Deployment/web)"}},

		{Name: "hash label is the controller's", Input: rollout(canary(pair, pauseSteps)) + webServices + service("web", "{app: web, tier: front}")},
		{Name: "workloadRef labels match", Input: viaRef + deploy + webServices},
		{Name: "missing Service is the services rules' finding", Input: rollout(canary(pair, pauseSteps))},
		{Name: "missing workloadRef target is rollout-workload-ref's", Input: viaRef + service("web-canary", "{app: nothing}")},
	})
}
