// Package rules defines what a rule is: a stable id, a default severity, a
// one-line doc, the outage it prevents, a Check over the rendered resources
// and the selftest Mutants that must make it fire (Rule); what a Check sees
// (Context); and how the engine runs them (Run).
//
// The rules themselves live one per file in a folder per family
// (render, images, rollouts, argocd, live), and rules/all lists every one
// of them explicitly. That list is the single source for the engine, the
// plugin's --help, SARIF rule metadata, selftest and the README's rule
// table, so none of them can drift from the code. CONTRIBUTING.md says how
// to add a rule.
package rules
