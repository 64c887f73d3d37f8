// Package fn is the KRM function shell of the gate (the gate-fn binary).
//
// It speaks the KRM Functions Specification: a ResourceList on stdin, a
// ResourceList on stdout with structured results, one human line per finding
// on stderr (kustomize shows only stderr), and a non-zero exit on any
// error-severity result. Its functionConfig picks the mode:
//
//   - kind: Gate, listed under the kustomization's validators: field, checks
//     and emits `items: []` — the only output kustomize accepts from a
//     validator, which then keeps the original resources (kustomize#5036).
//   - kind: Pin, listed last under transformers:, resolves tags to digests,
//     rewrites the images, runs every Gate check on the result and passes
//     all items through.
//
// The function never imports cli-runtime, client-go or cobra; a test keeps
// its import graph lean.
package fn
