// Package external runs a team's existing policy tools on the rendered
// stream — `kyverno apply` for Kyverno policies (and ValidatingAdmissionPolicies
// Kyverno understands) and `conftest test` for Rego — and turns their
// results into plain findings with exit-code discipline: a tool that is
// missing, crashes, times out or prints what does not parse is a
// *NoVerdictError (exit 3), never a pass. A policy the tool reports no
// result for is an Unbound finding: a check that looked at nothing must say
// so.
package external
