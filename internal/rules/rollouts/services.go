package rollouts

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Why a member of a Service pair is needed, for the "is not set" findings.
const (
	whyTrafficRouting = "this trafficRouting splits traffic between canaryService and stableService; the controller marks the Rollout InvalidSpec without both"
	whyPingPong       = "pingPong needs both pingService and pongService; the controller marks the Rollout InvalidSpec without them"
	whyActive         = "the blue/green strategy switches production traffic through the active Service"
	whyPreview        = "without a preview Service the new version takes no traffic before promotion, so nobody and no analysis can test it"
)

// serviceRef is one Service a Rollout names, by role.
type serviceRef struct {
	Role string // "canaryService", "pingService", "activeService", …
	Path string // field path in the Rollout
	Name string // empty when the field is not set
}

// canaryServiceFields are the parts of spec.strategy.canary that name Services.
type canaryServiceFields struct {
	CanaryService  string          `yaml:"canaryService"`
	StableService  string          `yaml:"stableService"`
	PingPong       *pingPong       `yaml:"pingPong"`
	TrafficRouting *trafficRouting `yaml:"trafficRouting"`
}

type pingPong struct {
	PingService string `yaml:"pingService"`
	PongService string `yaml:"pongService"`
}

// trafficRouting holds the router keys of spec.strategy.canary.trafficRouting.
type trafficRouting struct {
	Istio *struct {
		DestinationRule *yaml.Node `yaml:"destinationRule"`
	} `yaml:"istio"`
	ALB *struct {
		RootService string `yaml:"rootService"`
	} `yaml:"alb"`
	SMI *struct {
		RootService string `yaml:"rootService"`
	} `yaml:"smi"`
	Other map[string]any `yaml:",inline"`
}

// canaryRefs reads the Services of a canary. The pairs are canary/stable
// and, with pingPong, ping/pong; roots are the routers' root Services.
func canaryRefs(ro *yaml.RNode) (f canaryServiceFields, pairs [][2]serviceRef, roots []serviceRef, err error) {
	const base = "spec.strategy.canary"
	if _, err = decodeAt(ro, base, &f); err != nil {
		return f, nil, nil, err
	}
	pairs = append(pairs, [2]serviceRef{
		{"canaryService", base + ".canaryService", f.CanaryService},
		{"stableService", base + ".stableService", f.StableService},
	})
	if f.PingPong != nil {
		pairs = append(pairs, [2]serviceRef{
			{"pingService", base + ".pingPong.pingService", f.PingPong.PingService},
			{"pongService", base + ".pingPong.pongService", f.PingPong.PongService},
		})
	}
	if tr := f.TrafficRouting; tr != nil && tr.ALB != nil && tr.ALB.RootService != "" {
		roots = append(roots, serviceRef{"alb.rootService", base + ".trafficRouting.alb.rootService", tr.ALB.RootService})
	}
	if tr := f.TrafficRouting; tr != nil && tr.SMI != nil && tr.SMI.RootService != "" {
		roots = append(roots, serviceRef{"smi.rootService", base + ".trafficRouting.smi.rootService", tr.SMI.RootService})
	}
	return f, pairs, roots, nil
}

// blueGreenRefs reads the active/preview pair of a blue/green Rollout.
func blueGreenRefs(ro *yaml.RNode) ([2]serviceRef, error) {
	const base = "spec.strategy.blueGreen"
	var f struct {
		ActiveService  string `yaml:"activeService"`
		PreviewService string `yaml:"previewService"`
	}
	_, err := decodeAt(ro, base, &f)
	return [2]serviceRef{
		{"activeService", base + ".activeService", f.ActiveService},
		{"previewService", base + ".previewService", f.PreviewService},
	}, err
}

// requiresCanaryStable mirrors the controller's requireCanaryStableServices
// (pkg/apis/rollouts/validation in argo-rollouts v1.10): the traffic routers
// that split between the two Services need both. Traffic-router plugins are
// added: the Gateway API plugin, the common one, routes between them too.
func requiresCanaryStable(f canaryServiceFields) bool {
	tr := f.TrafficRouting
	if tr == nil {
		return false
	}
	noPingPong := f.PingPong == nil
	switch {
	case tr.ALB != nil && noPingPong,
		tr.Istio != nil && tr.Istio.DestinationRule == nil && noPingPong,
		tr.SMI != nil:
		return true
	}
	for _, k := range []string{"apisix", "ambassador", "nginx", "appMesh", "traefik"} {
		if tr.Other[k] != nil {
			return true
		}
	}
	return tr.Other["plugins"] != nil && noPingPong
}

// pairFindings checks a Service pair: both set (when required), different,
// and in the render in the Rollout's namespace. why says, per member, what
// goes wrong when it is not set; an empty why makes the member optional.
func pairFindings(c *rules.Context, rule string, ro *yaml.RNode, pair [2]serviceRef, why [2]string) []finding.Finding {
	var out []finding.Finding
	for i, s := range pair {
		switch {
		case s.Name == "" && why[i] != "":
			out = append(out, manifest.Finding(rule, finding.SeverityError, ro, s.Path, nil, "%s is not set: %s", s.Role, why[i]))
		case s.Name != "" && lookup(c, groupCore, "Service", manifest.Namespace(ro), s.Name) == nil:
			out = append(out, manifest.Finding(rule, finding.SeverityError, ro, s.Path, s.Name,
				"%s %q is not in the render%s: the controller marks the Rollout InvalidSpec", s.Role, s.Name, inNamespace(ro)))
		}
	}
	if a, b := pair[0], pair[1]; a.Name != "" && a.Name == b.Name {
		out = append(out, manifest.Finding(rule, finding.SeverityError, ro, b.Path, b.Name,
			"%s and %s are the same Service %q: two different Services are required, or both versions get the same traffic", a.Role, b.Role, a.Name))
	}
	return out
}

// sharedFindings reports Services this Rollout names that another Rollout
// names too: each controller loop rewrites the selector for its own pods.
func sharedFindings(users map[manifest.Key][]string, rule string, ro *yaml.RNode, refs []serviceRef) []finding.Finding {
	var out []finding.Finding
	for _, s := range refs {
		if s.Name == "" {
			continue
		}
		var others []string
		for _, u := range users[manifest.Key{Kind: "Service", Namespace: manifest.Namespace(ro), Name: s.Name}] {
			if u != manifest.Name(ro) {
				others = append(others, "Rollout/"+u)
			}
		}
		if len(others) > 0 {
			out = append(out, manifest.Finding(rule, finding.SeverityError, ro, s.Path, s.Name,
				"Service %q is also named by %s: a Service can be managed by one Rollout only", s.Name, strings.Join(others, ", ")))
		}
	}
	return out
}

// serviceUsers maps each Service key to the Rollouts that name it.
func serviceUsers(c *rules.Context) map[manifest.Key][]string {
	return rules.Memo(c, "serviceUsers", func() map[manifest.Key][]string { return buildServiceUsers(c) })
}

func buildServiceUsers(c *rules.Context) map[manifest.Key][]string {
	m := map[manifest.Key][]string{}
	for _, ro := range rollouts(c) {
		seen := map[string]bool{}
		for _, s := range allServiceRefs(ro) {
			if s.Name != "" && !seen[s.Name] {
				seen[s.Name] = true
				k := manifest.Key{Kind: "Service", Namespace: manifest.Namespace(ro), Name: s.Name}
				m[k] = append(m[k], manifest.Name(ro))
			}
		}
	}
	for k := range m {
		sort.Strings(m[k])
	}
	return m
}

// allServiceRefs lists every Service a Rollout names; unreadable parts are
// left out (the rules that read them report it).
func allServiceRefs(ro *yaml.RNode) []serviceRef {
	var out []serviceRef
	if hasStrategy(ro, "canary") {
		if _, pairs, roots, err := canaryRefs(ro); err == nil {
			for _, p := range pairs {
				out = append(out, p[0], p[1])
			}
			out = append(out, roots...)
		}
	}
	if hasStrategy(ro, "blueGreen") {
		if p, err := blueGreenRefs(ro); err == nil {
			out = append(out, p[0], p[1])
		}
	}
	return out
}

func inNamespace(ro *yaml.RNode) string {
	if ns := manifest.Namespace(ro); ns != "" {
		return fmt.Sprintf(" (namespace %s)", ns)
	}
	return " (same namespace as the Rollout)"
}
