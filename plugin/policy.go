package plugin

import (
	"github.com/spf13/pflag"
)

// addPolicyFlags registers the policy rule's flags (README "Policies");
// pipeline.PolicyOptions.Validate checks them.
func addPolicyFlags(fs *pflag.FlagSet, opts *options) {
	o := &opts.policy
	fs.StringArrayVar(&o.Paths, "policy", nil, "ValidatingAdmissionPolicy/binding/param `FILE|DIR` evaluated offline as the API server would (repeatable)")
	fs.BoolVar(&opts.policiesFromRender, "policies-from-render", false, "also evaluate the ValidatingAdmissionPolicies and bindings the render holds, local-config ones included (= spec.policiesFromRender)")
	fs.StringArrayVar(&o.NamespaceLabels, "namespace-labels", nil, "labels of a Namespace the render does not declare: `NS=key=value,key=value` (repeatable)")
	fs.StringArrayVar(&o.KyvernoPolicies, "kyverno-policy", nil, "run kyverno apply with these policy `FILE|DIR`s on the render (repeatable)")
	fs.StringArrayVar(&o.RegoDirs, "rego", nil, "run conftest test with the Rego policies in `DIR` on the render (repeatable)")
	fs.StringVar(&o.Kyverno, "kyverno", "", "the kyverno CLI `PATH` (default: kyverno or kubectl-kyverno on PATH)")
	fs.StringVar(&o.Conftest, "conftest", "", "the conftest CLI `PATH` (default: conftest on PATH)")
}
