package policy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/policy/external"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// RuleID is the id of the rule whose findings the Checker produces.
const RuleID = "policy"

// Checker runs every policy source the configuration names on a render and
// returns `policy` findings: ValidatingAdmissionPolicies in process, Kyverno
// and Rego policies through their own CLIs.
type Checker struct {
	// Set holds the policies, bindings and params of --policy and
	// spec.policies.
	Set *Set
	// FromRender also evaluates the policies and bindings the render holds.
	FromRender bool
	Options    Options

	// Kyverno: policy files or directories for `kyverno apply`, the names
	// of the policies they hold, and the tool.
	KyvernoPolicies []string
	KyvernoNames    []string
	Kyverno         external.Options
	// RegoDirs: directories for `conftest test`, and the tool.
	RegoDirs []string
	Conftest external.Options
}

// Check evaluates the render. An error means no verdict; a *ConfigError a
// usage error.
func (c *Checker) Check(ctx context.Context, resources []*yaml.RNode) ([]finding.Finding, error) {
	var out []finding.Finding
	if c.Set != nil || c.FromRender {
		fs, err := c.checkVAP(ctx, resources)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	if len(c.KyvernoPolicies) == 0 && len(c.RegoDirs) == 0 || len(resources) == 0 {
		// An empty render gives the tools nothing to judge (and a tool must
		// judge the render): render-empty reports it.
		return out, nil
	}
	// kio.ByteWriter's output, without its deep copy of the render and
	// single encoder (1.4 s and ~800 MB on 10,000 objects).
	rendered, err := stream.Encode(resources)
	if err != nil {
		return nil, fmt.Errorf("write the render for the policy tools: %w", err)
	}
	if len(c.KyvernoPolicies) > 0 {
		fs, err := external.Kyverno(ctx, c.Kyverno, c.KyvernoPolicies, c.KyvernoNames, rendered, identities(resources))
		if err != nil {
			return nil, err
		}
		out = append(out, externalFindings(fs, resources)...)
	}
	if len(c.RegoDirs) > 0 {
		fs, err := external.Conftest(ctx, c.Conftest, c.RegoDirs, rendered)
		if err != nil {
			return nil, err
		}
		out = append(out, externalFindings(fs, resources)...)
	}
	return out, nil
}

func (c *Checker) checkVAP(ctx context.Context, resources []*yaml.RNode) ([]finding.Finding, error) {
	rep, err := evaluateRender(ctx, c.Set, c.FromRender, resources, c.Options)
	if err != nil {
		return nil, err
	}
	out := make([]finding.Finding, 0, len(rep.Results))
	for _, r := range rep.Results {
		f := finding.Finding{Rule: RuleID, Severity: severity(r.Action), Message: message(r), NoVerdict: r.Action == NoVerdict}
		if r.Index >= 0 {
			f.ResourceRef = ref(resources[r.Index])
		}
		out = append(out, f)
	}
	if c.FromRender && !holdsPolicy(resources) {
		out = append(out, finding.Finding{Rule: RuleID, Severity: finding.SeverityWarning,
			Message: "--policies-from-render / spec.policiesFromRender: the render holds no ValidatingAdmissionPolicy (local-config ones count), so no policy of the render was evaluated"})
	}
	return out, nil
}

// holdsPolicy reports whether the render declares a ValidatingAdmissionPolicy.
func holdsPolicy(resources []*yaml.RNode) bool {
	for _, r := range resources {
		if r.GetKind() == kindPolicy && strings.HasPrefix(r.GetApiVersion(), admissionGroup+"/") {
			return true
		}
	}
	return false
}

// severity maps a result to a finding severity: Deny error, Warn warning,
// Audit info (README "Rules", policy).
func severity(a Action) finding.Severity {
	switch a {
	case Deny, NoVerdict:
		return finding.SeverityError
	case Warn, Ignored, Unbound:
		return finding.SeverityWarning
	}
	return finding.SeverityInfo
}

func message(r Result) string {
	switch r.Action {
	case Audit:
		return fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' (Audit): %s", r.Policy, r.Binding, r.Message)
	case NoVerdict:
		return "no verdict: " + r.Message
	}
	return r.Message
}

func ref(r *yaml.RNode) *finding.ResourceRef {
	return &finding.ResourceRef{APIVersion: r.GetApiVersion(), Kind: r.GetKind(), Name: r.GetName(), Namespace: r.GetNamespace()}
}

// identities names the render's objects for the tools' coverage check.
func identities(resources []*yaml.RNode) []external.Resource {
	out := make([]external.Resource, len(resources))
	for i, r := range resources {
		out[i] = external.Resource{APIVersion: r.GetApiVersion(), Kind: r.GetKind(), Namespace: r.GetNamespace(), Name: r.GetName()}
	}
	return out
}

func externalFindings(fs []external.Finding, resources []*yaml.RNode) []finding.Finding {
	out := make([]finding.Finding, 0, len(fs))
	for _, f := range fs {
		name := f.Policy
		if f.Rule != "" {
			name += "/" + f.Rule
		}
		g := finding.Finding{Rule: RuleID, Message: fmt.Sprintf("%s policy %s: %s", f.Tool, name, f.Message)}
		switch f.Result {
		case external.Fail:
			g.Severity = finding.SeverityError
		case external.Warning, external.Unbound:
			g.Severity = finding.SeverityWarning
		default:
			g.Severity, g.NoVerdict = finding.SeverityError, true
		}
		if r := f.Resource; r != nil {
			g.ResourceRef = &finding.ResourceRef{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace}
		}
		out = append(out, g)
	}
	return out
}

// DefaultToolTimeout bounds one external tool run.
const DefaultToolTimeout = 5 * time.Minute
