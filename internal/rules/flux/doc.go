// Package flux holds the Flux rules. They judge a Flux Kustomization
// (kustomize.toolkit.fluxcd.io) against the render of its spec.path, which
// the plugin makes with --apps-root as kustomize-controller would and hands
// over in rules.Context.Apps (the Kustomization as App, Index -1).
package flux
