package plugin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/policy"
	"github.com/kubectl-gate/kubectl-gate/internal/policy/external"
)

// policyOptions are the policy rule's flags (README "Policies").
type policyOptions struct {
	policies           []string
	policiesFromRender bool
	namespaceLabels    []string
	kyvernoPolicies    []string
	regoDirs           []string
	kyverno            string
	conftest           string
}

func addPolicyFlags(fs *pflag.FlagSet, o *policyOptions) {
	fs.StringArrayVar(&o.policies, "policy", nil, "ValidatingAdmissionPolicy/binding/param `FILE|DIR` evaluated offline as the API server would (repeatable)")
	fs.BoolVar(&o.policiesFromRender, "policies-from-render", false, "also evaluate the ValidatingAdmissionPolicies and bindings the render holds")
	fs.StringArrayVar(&o.namespaceLabels, "namespace-labels", nil, "labels of a Namespace the render does not declare: `NS=key=value,key=value` (repeatable)")
	fs.StringArrayVar(&o.kyvernoPolicies, "kyverno-policy", nil, "run `kyverno apply` with these policy `FILE|DIR`s on the render (repeatable)")
	fs.StringArrayVar(&o.regoDirs, "rego", nil, "run `conftest test` with the Rego policies in `DIR` on the render (repeatable)")
	fs.StringVar(&o.kyverno, "kyverno", "", "the kyverno CLI `PATH` (default: kyverno or kubectl-kyverno on PATH)")
	fs.StringVar(&o.conftest, "conftest", "", "the conftest CLI `PATH` (default: conftest on PATH)")
}

// namespaceLabelMap parses --namespace-labels.
func (o *policyOptions) namespaceLabelMap() (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, v := range o.namespaceLabels {
		ns, rest, ok := strings.Cut(v, "=")
		if !ok || ns == "" {
			return nil, usageErr("--namespace-labels", "%q is not NS=key=value,…", v)
		}
		labels := map[string]string{}
		for _, kv := range strings.Split(rest, ",") {
			if kv == "" {
				continue
			}
			k, val, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, usageErr("--namespace-labels", "%q: %q is not key=value", v, kv)
			}
			labels[k] = val
		}
		out[ns] = labels
	}
	return out, nil
}

// policyChecker builds the policy rule's checker for one unit: --policy and
// spec.policies (relative to the config that names them), the render's own
// policies with --policies-from-render, and the external tools. It returns
// nil when no policy is configured.
func (r *runner) policyChecker(spec *config.Spec, u *unit) (gate.PolicyChecker, error) {
	o := &r.o.policy
	var paths []string // --policy paths are in spec.Policies already (options.apply)
	base := ""
	switch {
	case r.o.configFile != "":
		base = filepath.Dir(r.o.configFile)
	case u.found != nil:
		base = u.dir
	}
	for _, p := range spec.Policies {
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 && !o.policiesFromRender && len(o.kyvernoPolicies) == 0 && len(o.regoDirs) == 0 {
		return nil, nil
	}
	labels, err := o.namespaceLabelMap()
	if err != nil {
		return nil, err
	}
	c := &policy.Checker{
		FromRender: o.policiesFromRender,
		Options:    policy.Options{NamespaceLabels: labels},
		Kyverno:    external.Options{Path: o.kyverno, Timeout: policy.DefaultToolTimeout},
		Conftest:   external.Options{Path: o.conftest, Timeout: policy.DefaultToolTimeout},
		RegoDirs:   o.regoDirs,
	}
	if len(paths) > 0 {
		if c.Set, err = policy.LoadPaths(paths); err != nil {
			return nil, policyUsage(err)
		}
	}
	if len(o.kyvernoPolicies) > 0 {
		files, err := policy.PolicyFiles(o.kyvernoPolicies)
		if err != nil {
			return nil, policyUsage(err)
		}
		if c.KyvernoNames, err = kyvernoNames(files); err != nil {
			return nil, policyUsage(err)
		}
		c.KyvernoPolicies = o.kyvernoPolicies
	}
	return c, nil
}

// policyUsage makes a bad policy source a usage error (exit 2).
func policyUsage(err error) error {
	var ce *policy.ConfigError
	if errors.As(err, &ce) {
		return &config.UsageError{Where: "policies", Err: err}
	}
	return err
}

func kyvernoNames(files []string) ([]string, error) {
	contents := make([][]byte, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, &policy.ConfigError{Source: f, Err: err}
		}
		contents = append(contents, b)
	}
	names, err := external.PolicyNames(contents)
	if err != nil {
		return nil, &policy.ConfigError{Source: "--kyverno-policy", Err: err}
	}
	return names, nil
}

// validate loads the policy flags' files once before any render, so a bad
// policy file is a usage error (exit 2) rather than a unit's failure.
func (o *policyOptions) validate() error {
	if _, err := o.namespaceLabelMap(); err != nil {
		return err
	}
	// kyverno and conftest run in a scratch directory: a relative path would
	// name nothing there, and kyverno given no policy file exits 0. The
	// paths become absolute, and a rego directory must exist.
	for i, p := range o.kyvernoPolicies {
		abs, err := filepath.Abs(p)
		if err != nil {
			return usageErr("--kyverno-policy", "%q: %v", p, err)
		}
		o.kyvernoPolicies[i] = abs
	}
	for i, p := range o.regoDirs {
		abs, err := filepath.Abs(p)
		if err != nil {
			return usageErr("--rego", "%q: %v", p, err)
		}
		st, err := os.Stat(abs)
		if err != nil || !st.IsDir() {
			return usageErr("--rego", "%q is not a directory of Rego policies", p)
		}
		o.regoDirs[i] = abs
	}
	if len(o.policies) > 0 {
		if _, err := policy.LoadPaths(o.policies); err != nil {
			return policyUsage(err)
		}
	}
	if len(o.kyvernoPolicies) > 0 {
		files, err := policy.PolicyFiles(o.kyvernoPolicies)
		if err != nil {
			return policyUsage(err)
		}
		if _, err := kyvernoNames(files); err != nil {
			return policyUsage(err)
		}
	}
	return nil
}
