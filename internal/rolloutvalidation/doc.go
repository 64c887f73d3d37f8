// Package rolloutvalidation runs the Argo Rollouts controller's own
// validation (github.com/argoproj/argo-rollouts pkg/apis/rollouts/validation,
// at Version) on a Rollout of a render, with the Services, AnalysisTemplates,
// Ingresses and Istio VirtualServices of the render it names. That package
// brings in much of the controller (its traffic routers, metric providers,
// kubectl helpers), so only the plugin links this one: the KRM function
// reports rollout-invalid-spec as not run (internal/rules/rollouts).
package rolloutvalidation
