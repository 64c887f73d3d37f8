// Package config holds the gate's configuration object, shared by both
// shells: the plugin's --config FILE and the KRM function's functionConfig.
//
//	apiVersion: kubectl-gate.dev/v1alpha1
//	kind: Gate            # or Pin
//	metadata:
//	  name: prod
//	spec:
//	  images:
//	    digest: require   # require | verify | off
//	  render:
//	    minResources: 1
//	    remote: allow     # allow | deny (= --no-remote)
//	  rules:
//	    rollout-bluegreen-autopromotion: error
//
// Decoding is strict: an unknown field, an unknown rule id or a bad value is
// an error naming the field, because a typo in a gate config must never
// silently disable a check. Every field has a safe default, so an empty spec
// is a strict gate.
package config
