// Package images finds container images in rendered objects and rewrites
// them.
//
// One walk (Find, Collect) serves every caller, check and pin alike: it
// visits the whole object outside metadata and status and reads every
// container list (containers, initContainers, ephemeralContainers; Argo
// Workflows and Tekton sidecars and steps) and every single container (Argo
// Workflows container and script, Tekton stepTemplate) at any depth, so a
// workload nested in an Argo Rollouts Experiment or AnalysisTemplate job,
// a Workflow, a Knative Service, a KEDA ScaledJob or any CRD is seen without
// configuration. Configured pod spec paths (spec.images.podSpecPaths, list
// items written key[]) add pod specs under keys the walk does not know;
// Unmatched names the configured paths that match nothing. Kyverno policies
// and CustomResourceDefinitions are left out: their container-shaped fields
// are patterns and schemas, not workloads.
package images
