package rollouts

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// TrafficRef fires when a canary's traffic routing names an object that is
// not in the render.
var TrafficRef = rules.Rule{
	ID: "rollout-traffic-ref", Default: finding.SeverityError, Family: "rollouts",
	Doc:      "canary trafficRouting names an object that is not in the render (same namespace): nginx stableIngress(es), ALB ingress(es)/rootService, Istio VirtualService(s) and their named routes, DestinationRule, SMI rootService, Traefik TraefikService, Apisix ApisixRoute, Ambassador mappings, Gateway API HTTPRoute(s) of the gatewayAPI plugin",
	Outage:   "the controller cannot shift traffic: the Rollout goes Degraded mid-deploy, or the canary takes no traffic and is never really tested",
	Fix:      "add the object trafficRouting names to the render, in the Rollout's namespace, or correct the name",
	Mutation: "rename the object trafficRouting names",
	Follows:  follows,
	Reads:    reads,
	Check:    checkTrafficRef,
	Mutants: []rules.Mutant{
		{Name: "rename the object trafficRouting names", Apply: rules.OnResources(onCanary(renameTrafficRef))},
	},
}

const ruleTrafficRef = "rollout-traffic-ref"

const trafficPath = "spec.strategy.canary.trafficRouting"

// trafficKind is a kind trafficRouting may name, in any of its API groups.
type trafficKind struct {
	kind   string
	groups []string
}

var (
	kindIngress        = trafficKind{"Ingress", []string{"networking.k8s.io", "extensions"}}
	kindService        = trafficKind{"Service", []string{groupCore}}
	kindVirtualService = trafficKind{"VirtualService", []string{"networking.istio.io"}}
	kindDestRule       = trafficKind{"DestinationRule", []string{"networking.istio.io"}}
	kindTraefik        = trafficKind{"TraefikService", []string{"traefik.io", "traefik.containo.us"}}
	kindApisix         = trafficKind{"ApisixRoute", []string{"apisix.apache.org"}}
	kindMapping        = trafficKind{"Mapping", []string{"getambassador.io"}}
	kindHTTPRoute      = trafficKind{"HTTPRoute", []string{"gateway.networking.k8s.io"}}
)

// trafficRef is one object named under trafficRouting.
type trafficRef struct {
	path string // field path
	kind trafficKind
	name string
	// routes are Istio HTTP route names the VirtualService must hold.
	routes     []string
	routesPath string
}

// checkTrafficRef resolves every name under a canary's trafficRouting as
// the controller does (rollout/trafficrouting in argo-rollouts v1.10):
// in the Rollout's namespace, Istio's "name.namespace" form included.
func checkTrafficRef(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, ro := range rollouts(c) {
		tr := yamlpath.Dotted(ro.YNode(), trafficPath)
		if tr == nil || tr.Kind != yaml.MappingNode {
			continue
		}
		for _, ref := range trafficRefs(tr) {
			out = append(out, trafficFindings(c, ro, ref)...)
		}
	}
	return out
}

func trafficRefs(tr *yaml.Node) []trafficRef {
	var refs []trafficRef
	one := func(path string, k trafficKind, name string) {
		if name != "" {
			refs = append(refs, trafficRef{path: trafficPath + "." + path, kind: k, name: name})
		}
	}
	many := func(path string, k trafficKind, list *yaml.Node, key string) {
		if list == nil || list.Kind != yaml.SequenceNode {
			return
		}
		for i, e := range list.Content {
			name := e.Value
			if key != "" {
				name = yamlpath.String(e, key)
			}
			one(fmt.Sprintf("%s[%d]", path, i), k, name)
		}
	}
	if n := yamlpath.Field(tr, "nginx"); n != nil {
		one("nginx.stableIngress", kindIngress, yamlpath.String(n, "stableIngress"))
		many("nginx.stableIngresses", kindIngress, yamlpath.Field(n, "stableIngresses"), "")
	}
	if n := yamlpath.Field(tr, "alb"); n != nil {
		one("alb.ingress", kindIngress, yamlpath.String(n, "ingress"))
		many("alb.ingresses", kindIngress, yamlpath.Field(n, "ingresses"), "")
		one("alb.rootService", kindService, yamlpath.String(n, "rootService"))
	}
	if n := yamlpath.Field(tr, "istio"); n != nil {
		istioVS := func(path string, vs *yaml.Node) {
			name := yamlpath.String(vs, "name")
			if name == "" {
				return
			}
			ref := trafficRef{path: trafficPath + "." + path + ".name", kind: kindVirtualService, name: name, routesPath: trafficPath + "." + path + ".routes"}
			if routes := yamlpath.Field(vs, "routes"); routes != nil && routes.Kind == yaml.SequenceNode {
				for _, r := range routes.Content {
					ref.routes = append(ref.routes, r.Value)
				}
			}
			refs = append(refs, ref)
		}
		if vs := yamlpath.Field(n, "virtualService"); vs != nil {
			istioVS("istio.virtualService", vs)
		}
		if list := yamlpath.Field(n, "virtualServices"); list != nil && list.Kind == yaml.SequenceNode {
			for i, vs := range list.Content {
				istioVS(fmt.Sprintf("istio.virtualServices[%d]", i), vs)
			}
		}
		one("istio.destinationRule.name", kindDestRule, yamlpath.String(n, "destinationRule.name"))
	}
	if n := yamlpath.Field(tr, "smi"); n != nil {
		one("smi.rootService", kindService, yamlpath.String(n, "rootService"))
	}
	if n := yamlpath.Field(tr, "traefik"); n != nil {
		one("traefik.weightedTraefikServiceName", kindTraefik, yamlpath.String(n, "weightedTraefikServiceName"))
	}
	if n := yamlpath.Field(tr, "apisix"); n != nil {
		one("apisix.route.name", kindApisix, yamlpath.String(n, "route.name"))
	}
	if n := yamlpath.Field(tr, "ambassador"); n != nil {
		many("ambassador.mappings", kindMapping, yamlpath.Field(n, "mappings"), "")
	}
	if n := yamlpath.Get(tr, "plugins", "argoproj-labs/gatewayAPI"); n != nil {
		p := "plugins.argoproj-labs/gatewayAPI"
		one(p+".httpRoute", kindHTTPRoute, yamlpath.String(n, "httpRoute"))
		many(p+".httpRoutes", kindHTTPRoute, yamlpath.Field(n, "httpRoutes"), "name")
	}
	return refs
}

func trafficFindings(c *rules.Context, ro *yaml.RNode, ref trafficRef) []finding.Finding {
	name, ns := ref.name, manifest.Namespace(ro)
	if ref.kind.kind == kindVirtualService.kind {
		// Istio names a VirtualService of another namespace as name.namespace.
		if n, other, ok := strings.Cut(name, "."); ok {
			name, ns = n, other
		}
	}
	var obj *yaml.RNode
	for _, g := range ref.kind.groups {
		if obj = lookup(c, g, ref.kind.kind, ns, name); obj != nil {
			break
		}
	}
	where := inNamespace(ro)
	if ns != manifest.Namespace(ro) {
		where = fmt.Sprintf(" (namespace %s)", ns)
	}
	if obj == nil {
		return []finding.Finding{manifest.Finding(ruleTrafficRef, finding.SeverityError, ro, ref.path, ref.name,
			"trafficRouting names %s %q, which is not in the render%s: the controller cannot shift traffic and the Rollout goes Degraded mid-deploy", ref.kind.kind, ref.name, where)}
	}
	var out []finding.Finding
	have := httpRouteNames(obj)
	for i, r := range ref.routes {
		if !slices.Contains(have, r) {
			out = append(out, manifest.Finding(ruleTrafficRef, finding.SeverityError, ro, fmt.Sprintf("%s[%d]", ref.routesPath, i), r,
				"route %q is not an HTTP route of VirtualService %s (its routes: %s): the controller cannot set the canary weight", r, ref.name, strings.Join(have, ", ")))
		}
	}
	return out
}

func httpRouteNames(vs *yaml.RNode) []string {
	var out []string
	if http := yamlpath.Get(vs.YNode(), "spec", "http"); http != nil && http.Kind == yaml.SequenceNode {
		for _, r := range http.Content {
			if n := yamlpath.String(r, "name"); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// renameTrafficRef renames the first object the canary's trafficRouting
// names, so it is no longer in the render.
func renameTrafficRef(canary *yaml.RNode) bool {
	tr := yamlpath.Field(canary.YNode(), "trafficRouting")
	if tr == nil {
		return false
	}
	refs := trafficRefs(tr)
	if len(refs) == 0 {
		return false
	}
	n := yamlpath.Dotted(canary.YNode(), strings.TrimPrefix(strings.SplitN(refs[0].path, "[", 2)[0], "spec.strategy.canary."))
	if n == nil {
		return false
	}
	if n.Kind == yaml.SequenceNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind == yaml.MappingNode {
		n = yamlpath.Field(n, "name")
	}
	if n == nil || n.Kind != yaml.ScalarNode {
		return false
	}
	n.Value += "-renamed-by-selftest"
	return true
}
