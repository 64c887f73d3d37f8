// Package argo reads Argo CD objects as Argo CD does: an Application's
// sources and destination, the renders of its local sources (AppSource),
// which kinds Argo CD puts into the destination namespace, and what an
// ignoreDifferences entry hides from its diff.
//
// The argocd rules, the plugin's --apps-root renderer, selftest and the
// cluster reader of `kubectl gate status` share this model, so it sits
// below all of them.
package argo
