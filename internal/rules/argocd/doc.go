// Package argocd holds the Argo CD rules. The source rules judge an
// Application against the render of its local source, which the plugin
// makes with --apps-root (rules.Context.Apps); an Application whose source
// was not rendered is reported by argocd-source-not-rendered, never passed
// silently.
package argocd
