package main

// removedKinds are built-in kinds whose types are gone from k8s.io/api (and
// from client-go's scheme, or that the scheme never held: the
// apiextensions and apiregistration groups), so genLifecycle cannot read
// their lifecycle from the types. Without an entry, an object of one is
// "no schema" (schema-unknown) rather than "no longer served"
// (api-removed). Releases as the Kubernetes Deprecated API Migration
// Guide (kubernetes.io/docs/reference/using-api/deprecation-guide) and the
// types' last APILifecycle* methods state them.
var removedKinds = map[string]map[string]lifecycle{
	"extensions/v1beta1": {
		// Its replacement, policy/v1beta1, is removed too.
		"PodSecurityPolicy": {Deprecated: "1.11", Removed: "1.16"},
	},
	"policy/v1beta1": {
		// No replacement kind: Pod Security Admission took its place.
		"PodSecurityPolicy": {Introduced: "1.10", Deprecated: "1.21", Removed: "1.25"},
	},
	"autoscaling/v2beta1": {
		"HorizontalPodAutoscaler": {Introduced: "1.8", Deprecated: "1.22", Removed: "1.25", Replacement: "autoscaling/v2 HorizontalPodAutoscaler"},
	},
	"autoscaling/v2beta2": {
		"HorizontalPodAutoscaler": {Introduced: "1.12", Deprecated: "1.23", Removed: "1.26", Replacement: "autoscaling/v2 HorizontalPodAutoscaler"},
	},
	"apiextensions.k8s.io/v1beta1": {
		"CustomResourceDefinition": {Introduced: "1.7", Deprecated: "1.16", Removed: "1.22", Replacement: "apiextensions.k8s.io/v1 CustomResourceDefinition"},
	},
	"apiregistration.k8s.io/v1beta1": {
		"APIService": {Introduced: "1.7", Deprecated: "1.19", Removed: "1.22", Replacement: "apiregistration.k8s.io/v1 APIService"},
	},
}

// addRemovedKinds adds removedKinds to what the types say; a kind the types
// still describe keeps their word.
func addRemovedKinds(all map[string]map[string]lifecycle) {
	for gv, kinds := range removedKinds {
		for kind, lc := range kinds {
			if _, ok := all[gv][kind]; ok {
				continue
			}
			if all[gv] == nil {
				all[gv] = map[string]lifecycle{}
			}
			all[gv][kind] = lc
		}
	}
}
