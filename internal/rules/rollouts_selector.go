package rules

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Why a member of a Service pair is needed, for the "is not set" findings.
const (
	whyTrafficRouting = "this trafficRouting splits traffic between canaryService and stableService; the controller marks the Rollout InvalidSpec without both"
	whyPingPong       = "pingPong needs both pingService and pongService; the controller marks the Rollout InvalidSpec without them"
	whyActive         = "the blue/green strategy switches production traffic through the active Service"
	whyPreview        = "without a preview Service the new version takes no traffic before promotion, so nobody and no analysis can test it"
)

// checkCanaryServices checks the Service pairs of every canary. A basic
// canary (no trafficRouting) may leave them out: the controller then splits
// traffic by replica count behind the application's own Service, a valid
// and documented setup (SPEC §5.3 asks for both always; see the rule doc).
func checkCanaryServices(c *Context) []Finding {
	const rule = "rollout-canary-services"
	var out []Finding
	users := serviceUsers(c)
	for _, ro := range rollouts(c) {
		if !hasStrategy(ro, "canary") {
			continue
		}
		f, pairs, _, err := canaryRefs(ro)
		if err != nil {
			out = append(out, unreadable(rule, ro, "spec.strategy.canary", err))
			continue
		}
		var why [2]string
		if requiresCanaryStable(f) {
			why = [2]string{whyTrafficRouting, whyTrafficRouting}
		}
		out = append(out, pairFindings(c, rule, ro, pairs[0], why)...)
		if len(pairs) > 1 {
			out = append(out, pairFindings(c, rule, ro, pairs[1], [2]string{whyPingPong, whyPingPong})...)
		}
		var refs []serviceRef
		for _, p := range pairs {
			refs = append(refs, p[0], p[1])
		}
		out = append(out, sharedFindings(users, rule, ro, refs)...)
	}
	return out
}

// checkBlueGreenServices checks the active/preview pair of every blue/green.
func checkBlueGreenServices(c *Context) []Finding {
	const rule = "rollout-bluegreen-services"
	var out []Finding
	users := serviceUsers(c)
	for _, ro := range rollouts(c) {
		if !hasStrategy(ro, "blueGreen") {
			continue
		}
		pair, err := blueGreenRefs(ro)
		if err != nil {
			out = append(out, unreadable(rule, ro, "spec.strategy.blueGreen", err))
			continue
		}
		out = append(out, pairFindings(c, rule, ro, pair, [2]string{whyActive, whyPreview})...)
		out = append(out, sharedFindings(users, rule, ro, pair[:])...)
	}
	return out
}

// checkServiceSelector checks that every Service a Rollout names, and that
// is in the render, selects the Rollout's pods. The controller adds
// rollouts-pod-template-hash to the selector itself, so that key is ignored;
// every other key must be a pod template label with the same value, as the
// controller's ValidateService requires.
func checkServiceSelector(c *Context) []Finding {
	var out []Finding
	for _, ro := range rollouts(c) {
		labels, from, ok := podLabels(c, ro)
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for _, s := range allServiceRefs(ro) {
			svc := lookup(c, groupCore, "Service", namespaceOf(ro), s.Name)
			if s.Name == "" || seen[s.Name] || svc == nil {
				continue
			}
			seen[s.Name] = true
			if f, bad := selectorFinding(ro, svc, s, labels, from); bad {
				out = append(out, f)
			}
		}
	}
	return out
}

// selectorFinding compares one Service's selector with the pod labels.
func selectorFinding(ro, svc *yaml.RNode, s serviceRef, labels map[string]string, from string) (Finding, bool) {
	const rule = "rollout-service-selector"
	selector := map[string]string{}
	if _, err := decodeAt(svc, "spec.selector", &selector); err != nil {
		return unreadable(rule, svc, "spec.selector", err), true
	}
	var bad []string
	for k, v := range selector {
		if k == podTemplateHashLabel {
			continue
		}
		if got, ok := labels[k]; !ok || got != v {
			bad = append(bad, mismatch(k, v, got, ok))
		}
	}
	if len(bad) == 0 {
		return Finding{}, false
	}
	sort.Strings(bad)
	return finding(rule, SeverityError, svc, "spec.selector", selector,
		"Service %q is the %s of Rollout/%s but does not select its pods: %s in %s; the Service gets no endpoints and the controller marks the Rollout InvalidSpec",
		s.Name, s.Role, nameOf(ro), strings.Join(bad, ", "), from), true
}

func mismatch(key, want, got string, ok bool) string {
	if !ok {
		return fmt.Sprintf("selector %s=%s has no label %s", key, want, key)
	}
	return fmt.Sprintf("selector %s=%s but the label is %s=%s", key, want, key, got)
}
