package rollouts

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ServiceSelector fires on a Service the Rollout names that selects none of its pods.
var ServiceSelector = rules.Rule{
	ID: "rollout-service-selector", Default: finding.SeverityError, Family: "rollouts",
	Doc:      "a Service the Rollout names (canary, stable, ping, pong, active, preview, ALB/SMI root) does not select the pod template labels (of the workloadRef target too); rollouts-pod-template-hash is ignored",
	Outage:   "the Service selects none of the Rollout's pods: traffic goes nowhere, and the controller marks the Rollout InvalidSpec",
	Fix:      "make the Service's selector match the labels of the Rollout's pod template (or of its workloadRef's template)",
	Mutation: "break a Service selector",
	Follows:  follows,
	Reads:    reads,
	Check:    checkServiceSelector,
	Mutants: []rules.Mutant{
		{Name: "break the selector of a Service a Rollout names", Apply: rules.OnResources(breakSelector)},
	},
}

// checkServiceSelector checks that every Service a Rollout names, and that
// is in the render, selects the Rollout's pods. The controller adds
// rollouts-pod-template-hash to the selector itself, so that key is ignored;
// every other key must be a pod template label with the same value, as the
// controller's ValidateService requires.
func checkServiceSelector(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, ro := range rollouts(c) {
		labels, from, ok := podLabels(c, ro)
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for _, s := range allServiceRefs(ro) {
			svc := lookup(c, groupCore, "Service", manifest.Namespace(ro), s.Name)
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
func selectorFinding(ro, svc *yaml.RNode, s serviceRef, labels map[string]string, from string) (finding.Finding, bool) {
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
		return finding.Finding{}, false
	}
	sort.Strings(bad)
	return manifest.Finding(rule, finding.SeverityError, svc, "spec.selector", selector,
		"Service %q is the %s of Rollout/%s but does not select its pods: %s in %s; the Service gets no endpoints and the controller marks the Rollout InvalidSpec",
		s.Name, s.Role, manifest.Name(ro), strings.Join(bad, ", "), from), true
}
func mismatch(key, want, got string, ok bool) string {
	if !ok {
		return fmt.Sprintf("selector %s=%s has no label %s", key, want, key)
	}
	return fmt.Sprintf("selector %s=%s but the label is %s=%s", key, want, key, got)
}

// breakSelector changes the selector of the first Service in the render
// that a Rollout names: an existing label value gets a suffix, or, with no
// label but the hash, a label the pods lack is added.
func breakSelector(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
	named := map[[2]string]bool{}
	for _, ro := range rolloutsIn(rs) {
		for _, name := range namedServices(ro) {
			named[[2]string{ro.GetNamespace(), name}] = true
		}
	}
	for _, svc := range rs {
		if svc.GetKind() != "Service" || svc.GetApiVersion() != "v1" || !named[[2]string{svc.GetNamespace(), svc.GetName()}] {
			continue
		}
		sel, err := svc.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec", "selector"))
		if err == nil && sel != nil && breakMap(sel) {
			return rs, true
		}
	}
	return nil, false
}

func breakMap(sel *yaml.RNode) bool {
	keys, err := sel.Fields()
	if err != nil {
		return false
	}
	for _, k := range keys {
		if k != "rollouts-pod-template-hash" {
			return setString(sel, k, stringField(sel, k)+"-selftest-broken")
		}
	}
	return setString(sel, "kubectl-gate.dev/selftest", "broken")
}

// namedServices lists the Services a Rollout's strategy names.
func namedServices(ro *yaml.RNode) []string {
	var out []string
	for _, p := range [][]string{
		{"canary", "canaryService"}, {"canary", "stableService"},
		{"blueGreen", "activeService"}, {"blueGreen", "previewService"},
	} {
		n, err := ro.Pipe(yaml.Lookup("spec", "strategy", p[0], p[1]))
		if err == nil && n != nil && yaml.GetValue(n) != "" {
			out = append(out, yaml.GetValue(n))
		}
	}
	return out
}
