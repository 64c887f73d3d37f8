package schema

import (
	"strings"
	"testing"
)

// TestRemovedKindsGoneFromTheTypes: kinds whose Go types k8s.io/api no
// longer has are still known as removed (gen/removed.go), not unknown.
func TestRemovedKindsGoneFromTheTypes(t *testing.T) {
	for _, tc := range []struct{ apiVersion, kind, want string }{
		{"policy/v1beta1", "PodSecurityPolicy", "policy/v1beta1 PodSecurityPolicy is no longer served since Kubernetes 1.25"},
		{"extensions/v1beta1", "PodSecurityPolicy", "extensions/v1beta1 PodSecurityPolicy is no longer served since Kubernetes 1.16"},
		{"autoscaling/v2beta1", "HorizontalPodAutoscaler", "since Kubernetes 1.25; use autoscaling/v2 HorizontalPodAutoscaler"},
		{"autoscaling/v2beta2", "HorizontalPodAutoscaler", "since Kubernetes 1.26; use autoscaling/v2 HorizontalPodAutoscaler"},
		{"apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", "since Kubernetes 1.22; use apiextensions.k8s.io/v1 CustomResourceDefinition"},
		{"apiregistration.k8s.io/v1beta1", "APIService", "since Kubernetes 1.22; use apiregistration.k8s.io/v1 APIService"},
		// k8s.io/api names IngressClassList as its replacement.
		{"networking.k8s.io/v1beta1", "IngressClass", "since Kubernetes 1.22; use networking.k8s.io/v1 IngressClass"},
	} {
		t.Run(tc.apiVersion+" "+tc.kind, func(t *testing.T) {
			doc := "apiVersion: " + tc.apiVersion + "\nkind: " + tc.kind + "\nmetadata: {name: x}\nspec: {}\n"
			rs := validate(t, Options{KubernetesVersion: "1.34"}, doc)
			if len(rs) != 1 || rs[0].Rule != RuleAPIRemoved || !strings.Contains(rs[0].Reason, tc.want) {
				t.Fatalf("want one api-removed result with %q, got %v", tc.want, rs)
			}
		})
	}
}

// TestReplacementsAreKinds: every replacement the lifecycle data names is
// a kind, never a List (as k8s.io/api tags IngressClass v1beta1).
func TestReplacementsAreKinds(t *testing.T) {
	all, err := loadLifecycle()
	if err != nil {
		t.Fatal(err)
	}
	for gv, kinds := range all {
		for kind, lc := range kinds {
			if lc.Replacement == "" {
				continue
			}
			if strings.HasSuffix(lc.Replacement, "List") {
				t.Errorf("%s %s: replacement %q is a list, not a kind", gv, kind, lc.Replacement)
			}
		}
	}
}
