package rollouts_test

import (
	"fmt"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/rules/rollouts"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

func TestRolloutTrafficRef(t *testing.T) {
	const tr = canaryPath + ".trafficRouting"
	routed := func(routing string) string {
		return rollout(canary("canaryService: web-canary\nstableService: web-stable\ntrafficRouting:\n"+indent(routing, 2), pauseSteps))
	}
	obj := func(apiVersion, kind, name, spec string) string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: %s, namespace: shop}\nspec: %s\n---\n", apiVersion, kind, name, spec)
	}
	ingress := obj("networking.k8s.io/v1", "Ingress", "web", "{rules: [{host: shop.example.com}]}")
	vs := obj("networking.istio.io/v1", "VirtualService", "web", "{hosts: [web], http: [{name: primary, route: [{destination: {host: web-stable}}]}]}")
	dr := obj("networking.istio.io/v1", "DestinationRule", "web", "{host: web}")
	ruletest.Run(t, rollouts.TrafficRef, []ruletest.Case{
		{Name: "nginx stable ingress present", Input: routed("nginx: {stableIngress: web}") + webServices + ingress},
		{Name: "nginx stable ingress missing", Input: routed("nginx: {stableIngress: web-ingress}") + webServices + ingress,
			Want: []string{tr + `.nginx.stableIngress: trafficRouting names Ingress "web-ingress", which is not in the render (namespace shop)`}},
		{Name: "nginx stableIngresses", Input: routed("nginx: {stableIngresses: [web, web-admin]}") + webServices + ingress,
			Want: []string{tr + `.nginx.stableIngresses[1]: Ingress "web-admin"`}},
		{Name: "ingress in another namespace", Input: routed("nginx: {stableIngress: web}") + webServices +
			"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web, namespace: edge}\nspec: {}\n",
			Want: []string{tr + ".nginx.stableIngress: not in the render (namespace shop)"}},
		{Name: "ALB ingress and root service", Input: routed("alb: {ingress: web, rootService: web-root, servicePort: 80}") + webServices + ingress,
			Want: []string{tr + `.alb.rootService: Service "web-root"`}},
		{Name: "ALB complete", Input: routed("alb: {ingress: web, rootService: web-stable, servicePort: 80}") + webServices + ingress},
		{Name: "Istio complete", Input: routed("istio:\n  virtualService: {name: web, routes: [primary]}\n  destinationRule: {name: web, canarySubsetName: canary, stableSubsetName: stable}") + webServices + vs + dr},
		{Name: "Istio route not in the VirtualService", Input: routed("istio:\n  virtualService: {name: web, routes: [primary, secondary]}") + webServices + vs,
			Want: []string{tr + `.istio.virtualService.routes[1]: route "secondary" is not an HTTP route of VirtualService web (its routes: primary)`}},
		{Name: "Istio VirtualServices and DestinationRule missing", Input: routed("istio:\n  virtualServices: [{name: web, routes: [primary]}, {name: web-internal, routes: [primary]}]\n  destinationRule: {name: web-dr, canarySubsetName: canary, stableSubsetName: stable}") + webServices + vs,
			Want: []string{tr + `.istio.virtualServices[1].name: VirtualService "web-internal"`, tr + `.istio.destinationRule.name: DestinationRule "web-dr"`}},
		{Name: "Istio name.namespace form", Input: routed("istio:\n  virtualService: {name: web.mesh, routes: [primary]}") + webServices + vs,
			Want: []string{tr + `.istio.virtualService.name: VirtualService "web.mesh", which is not in the render (namespace mesh)`}},
		{Name: "SMI root service", Input: routed("smi: {rootService: web-root}") + webServices,
			Want: []string{tr + `.smi.rootService: Service "web-root"`}},
		{Name: "Traefik", Input: routed("traefik: {weightedTraefikServiceName: web-weighted}") + webServices,
			Want: []string{tr + `.traefik.weightedTraefikServiceName: TraefikService "web-weighted"`}},
		{Name: "Traefik present", Input: routed("traefik: {weightedTraefikServiceName: web-weighted}") + webServices + obj("traefik.io/v1alpha1", "TraefikService", "web-weighted", "{weighted: {}}")},
		{Name: "Apisix", Input: routed("apisix: {route: {name: web-route, rules: [r1]}}") + webServices,
			Want: []string{tr + `.apisix.route.name: ApisixRoute "web-route"`}},
		{Name: "Gateway API plugin", Input: routed("plugins:\n  argoproj-labs/gatewayAPI: {httpRoute: web-route, namespace: shop}") + webServices,
			Want: []string{tr + `.plugins.argoproj-labs/gatewayAPI.httpRoute: HTTPRoute "web-route"`}},
		{Name: "Gateway API plugin present", Input: routed("plugins:\n  argoproj-labs/gatewayAPI: {httpRoutes: [{name: web-route}]}") + webServices + obj("gateway.networking.k8s.io/v1", "HTTPRoute", "web-route", "{rules: []}")},
		{Name: "no traffic routing", Input: rollout(canary("", pauseSteps))},
	})
}
