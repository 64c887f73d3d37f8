// Package waiver applies accountable exceptions to a run's findings.
//
// An exception of the trusted config (spec.exceptions) or, when that config
// sets spec.exceptionsFromAnnotations, an object's kubectl-gate.dev/waive
// annotation marks the findings it matches as suppressed: they are still
// reported, with the reason, owner, expiry and source, but do not fail the
// run. Every waiver names rules, an owner, a reason and an expiry date:
//
//   - past its expiry it waives nothing and is an exception-expired error;
//   - if it waived nothing in a run it is an exception-unused warning;
//   - no-verdict findings and rules that are not waivable (render-empty,
//     gate-placement, the not-rendered rules, spec.rules.<id>.waivable:
//     false) are never suppressed: an exception that matches one is an
//     exception-ignored warning, and the finding stands.
//
// A Set holds one run's exceptions: every unit's findings are applied to
// the same Set, which is audited once at the end of the run. The time comes
// from a Clock passed in, so expiry is testable.
package waiver
