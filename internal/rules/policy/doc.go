// Package policy holds the rule that turns the configured policies —
// ValidatingAdmissionPolicies evaluated offline, and the team's Kyverno and
// Rego policies run through their own CLIs — into findings. The policies
// are evaluated by the shell's policy checker (internal/policy) before the
// rules run, so this package, like every rule, never links the API
// server's admission library or a cluster client.
package policy
