package rollouts_test

import (
	"fmt"
	"strings"
)

// Fixtures for the rollout rule tables: a shop's web Rollout in namespace
// shop, its Services and AnalysisTemplates, written as a render holds them.

const webImage = "ghcr.io/shop/web:1.4.2@sha256:4315c8fd5a82533f56a83922bc1d5a2cff2b1f1e76117f66673abbcffd6c9fff"

// rollout returns the web Rollout (pod labels app: web, tier: front) with
// the given strategy, written as the YAML under `strategy:`.
func rollout(strategy string) string {
	return rolloutWith("metadata: {name: web, namespace: shop}", podTemplate, strategy)
}

const podTemplate = `  template:
    metadata: {labels: {app: web, tier: front}}
    spec:
      containers: [{name: web, image: "` + webImage + `"}]
`

// rolloutWith builds a Rollout from its metadata line, the spec lines
// before the strategy, and the strategy.
func rolloutWith(metadata, spec, strategy string) string {
	return "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\n" + metadata + "\nspec:\n  replicas: 4\n" +
		"  selector: {matchLabels: {app: web}}\n" + spec + "  strategy:\n" + indent(strategy, 4) + "---\n"
}

// canary returns the strategy of a canary with services and steps, each
// step one line of flow YAML.
func canary(extra string, steps ...string) string {
	s := "canary:\n" + indent(extra, 2)
	if len(steps) > 0 {
		s += "  steps:\n"
		for _, st := range steps {
			s += "  - " + st + "\n"
		}
	}
	return s
}

// service returns a Service in namespace shop with a flow-YAML selector.
func service(name, selector string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: shop}\nspec:\n  selector: %s\n  ports: [{port: 80, targetPort: 8080}]\n---\n", name, selector)
}

// webServices are the canary/stable pair selecting the web pods.
var webServices = service("web-canary", "{app: web}") + service("web-stable", "{app: web, rollouts-pod-template-hash: abc}")

// template returns an AnalysisTemplate in namespace shop with flow-YAML args.
func template(kind, name, args string) string {
	meta := fmt.Sprintf("{name: %s, namespace: shop}", name)
	if kind == "ClusterAnalysisTemplate" {
		meta = fmt.Sprintf("{name: %s}", name)
	}
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: %s
metadata: %s
spec:
  args: %s
  metrics:
  - name: success-rate
    count: 3
    interval: 1m
    successCondition: result[0] >= 0.95
    provider:
      prometheus:
        address: http://prometheus.monitoring:9090
        query: sum(rate(http_requests_total{service="{{args.service-name}}",code!~"5.."}[5m]))
---
`, kind, meta, args)
}

// indent prefixes every non-empty line with n spaces.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l != "" {
			b.WriteString(pad + l)
		}
		b.WriteString("\n")
	}
	return b.String()
}
