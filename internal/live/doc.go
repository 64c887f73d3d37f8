// Package live is the cluster half of `kubectl gate status APP` (README "Use: `kubectl gate status`"):
// is Argo CD's green light telling the truth?
//
// [Gather] reads, through a small [Reader] interface (client-go's dynamic
// client in [KubeReader]), the Application from Argo CD's cluster, then
// every object its status.resources lists and the pods of its workloads —
// listed once per namespace, never once per workload — from the cluster it
// deploys to. [Judge] then runs the live rules on that [Snapshot] without
// touching the cluster again:
//
//	live-revision        status.sync.revision(s) vs the expected commit; OutOfSync
//	live-images          images the pods run vs the expected render (or status.summary.images)
//	live-resource-count  0 managed objects, a count that differs from the render, a managed object that is gone
//	live-health          [Health]: judged from status, not existence
//	argocd-ignore-differences  the static rule, on the live Application
//
// [Health] is a pure function over an unstructured object, so its
// judgments are table-tested against Argo CD's own health fixtures. It is
// stricter than Argo CD on purpose: an object whose controller has not
// caught up (observedGeneration behind, no status at all, Ready or
// Available False while still progressing) fails the gate, because a deploy
// that has not settled is not proven good; see [Problem.Settling].
package live
