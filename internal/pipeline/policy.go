package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/policy"
	"github.com/kubectl-gate/kubectl-gate/internal/policy/external"
)

// PolicyOptions are the policy rule's sources beyond spec.policies (README
// "Policies").
type PolicyOptions struct {
	// Paths are policy files or directories (--policy). The caller adds
	// them to spec.policies (Options.Flags); Validate loads them once.
	Paths []string
	// NamespaceLabels are the labels of Namespaces the render does not
	// declare: NS=key=value,key=value (--namespace-labels).
	NamespaceLabels []string
	// KyvernoPolicies run `kyverno apply` with these files or directories;
	// RegoDirs run `conftest test` with these directories.
	KyvernoPolicies []string
	RegoDirs        []string
	// Kyverno and Conftest are the CLIs' paths (default: found on PATH).
	Kyverno, Conftest string
}

// namespaceLabelMap parses --namespace-labels.
func (o *PolicyOptions) namespaceLabelMap() (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, v := range o.NamespaceLabels {
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

// policies reports whether the run evaluates policies under spec.
func (s *session) policies(spec *config.Spec) bool {
	o := &s.o.Policy
	return len(spec.Policies) > 0 || spec.PoliciesFromRender || len(o.KyvernoPolicies) > 0 || len(o.RegoDirs) > 0
}

// policyChecker builds the policy rule's checker for one unit: --policy and
// spec.policies (relative to the config that names them), the render's own
// policies with --policies-from-render, and the external tools. It returns
// nil when no policy is configured.
func (s *session) policyChecker(spec *config.Spec, u *Unit) (gate.PolicyChecker, error) {
	o := &s.o.Policy
	var paths []string // --policy paths are in spec.Policies already (Options.Flags)
	base := ""
	switch {
	case s.o.ConfigPath != "":
		base = filepath.Dir(s.o.ConfigPath)
	case u.found != nil:
		base = u.dir
	}
	for _, p := range config.Paths(spec.Policies) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		paths = append(paths, p)
	}
	if !s.policies(spec) {
		return nil, nil
	}
	labels, err := o.namespaceLabelMap()
	if err != nil {
		return nil, err
	}
	c := &policy.Checker{
		FromRender: spec.PoliciesFromRender,
		Options:    policy.Options{NamespaceLabels: labels},
		Kyverno:    external.Options{Path: o.Kyverno, Timeout: policy.DefaultToolTimeout},
		Conftest:   external.Options{Path: o.Conftest, Timeout: policy.DefaultToolTimeout},
		RegoDirs:   o.RegoDirs,
	}
	if len(spec.Policies) > 0 {
		inline, err := policy.InlineSources("spec.policies", spec.Policies)
		if err != nil {
			return nil, policyUsage(err)
		}
		if c.Set, err = policy.LoadAll(paths, inline...); err != nil {
			return nil, policyUsage(err)
		}
	}
	if len(o.KyvernoPolicies) > 0 {
		files, err := policy.PolicyFiles(o.KyvernoPolicies)
		if err != nil {
			return nil, policyUsage(err)
		}
		if c.KyvernoNames, err = kyvernoNames(files); err != nil {
			return nil, policyUsage(err)
		}
		c.KyvernoPolicies = o.KyvernoPolicies
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

// Validate loads the policy options' files once, before any render, so a
// bad policy file is a usage error (exit 2) rather than a unit's failure;
// it makes the kyverno and rego paths absolute.
func (o *PolicyOptions) Validate() error {
	if _, err := o.namespaceLabelMap(); err != nil {
		return err
	}
	// kyverno and conftest run in a scratch directory: a relative path would
	// name nothing there, and kyverno given no policy file exits 0. The
	// paths become absolute, and a rego directory must exist.
	for i, p := range o.KyvernoPolicies {
		abs, err := filepath.Abs(p)
		if err != nil {
			return usageErr("--kyverno-policy", "%q: %v", p, err)
		}
		o.KyvernoPolicies[i] = abs
	}
	for i, p := range o.RegoDirs {
		abs, err := filepath.Abs(p)
		if err != nil {
			return usageErr("--rego", "%q: %v", p, err)
		}
		st, err := os.Stat(abs)
		if err != nil || !st.IsDir() {
			return usageErr("--rego", "%q is not a directory of Rego policies", p)
		}
		o.RegoDirs[i] = abs
	}
	if len(o.Paths) > 0 {
		if _, err := policy.LoadPaths(o.Paths); err != nil {
			return policyUsage(err)
		}
	}
	if len(o.KyvernoPolicies) > 0 {
		files, err := policy.PolicyFiles(o.KyvernoPolicies)
		if err != nil {
			return policyUsage(err)
		}
		if _, err := kyvernoNames(files); err != nil {
			return policyUsage(err)
		}
	}
	return nil
}
