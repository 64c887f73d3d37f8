package argo

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestBodyIsWhatTheClusterReceives: app-shared-object calls two renders of
// one object identical when the cluster would receive the same object.
// Before, Body was the YAML text: kustomize's transformations annotation
// (configuredIn names each overlay's kustomization), a namespace written
// in one render and set by the destination in the other, and key order or
// quoting made identical renders an error "with different content" (found
// on rollouts-demo's examples/istio and istio-subset).
func TestBodyIsWhatTheClusterReceives(t *testing.T) {
	// The ConfigMap as kustomize builds it in overlay envs/eu with the
	// gate's build annotations (a patch and a namespace: transformer).
	const eu = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: web
  annotations:
    alpha.config.kubernetes.io/transformations: |
      - configuredIn: envs/eu/kustomization.yaml
        configuredBy:
          apiVersion: builtin
          kind: PatchTransformer
    config.kubernetes.io/origin: |
      path: base/cm.yaml
data:
  color: green
  port: "8080"
`
	cases := []struct {
		name, other string
		same        bool
	}{
		{"another overlay's transformations annotation", `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: web
  annotations:
    alpha.config.kubernetes.io/transformations: |
      - configuredIn: envs/us/kustomization.yaml
        configuredBy:
          apiVersion: builtin
          kind: PatchTransformer
    config.kubernetes.io/origin: |
      path: base/cm.yaml
data:
  color: green
  port: "8080"
`, true},
		{"no namespace written (the destination's), no annotations", `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
data:
  color: green
  port: "8080"
`, true},
		{"empty annotations left by the build", `apiVersion: v1
kind: ConfigMap
metadata: {name: web, annotations: {}, labels: {}}
data: {color: green, port: "8080"}
`, true},
		{"keys in another order, flow style and quotes", `kind: ConfigMap
data: {"port": '8080', color: "green"}
metadata: {namespace: web, name: web}
apiVersion: v1
`, true},
		{"another value", `apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: web}
data: {color: blue, port: "8080"}
`, false},
		{"a number where the other has a string", `apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: web}
data: {color: green, port: 8080}
`, false},
		{"an annotation the cluster keeps", `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  annotations: {argocd.argoproj.io/sync-wave: "1"}
data: {color: green, port: "8080"}
`, false},
		{"a label", `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  labels: {env: eu}
data: {color: green, port: "8080"}
`, false},
	}
	a := Body(yaml.MustParse(eu))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := Body(yaml.MustParse(c.other))
			if (a == b) != c.same {
				t.Errorf("identical %v, want %v:\n%s\n%s", a == b, c.same, a, b)
			}
		})
	}
}
