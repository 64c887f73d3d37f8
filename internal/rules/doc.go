// Package rules holds the gate's rules: each has a stable id, a default
// severity, a one-line doc and a Check function over the rendered resources.
//
// Rules are data. The registry (All, Lookup) is the single source for the
// config validator, the plugin's --help, SARIF rule metadata and the README's
// rule table, so none of them can drift from the code. Adding a rule is one
// entry in a family file plus its tests.
package rules
