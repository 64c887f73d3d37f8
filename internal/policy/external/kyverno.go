package external

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Kyverno runs `kyverno apply POLICY… --resource RENDER --policy-report`
// and reads the PolicyReports it prints. policies are files or
// directories; policyNames are the names of the policies they hold (see
// [PolicyNames]), so that a policy with no result is reported Unbound;
// objects are the render's objects, which kyverno's results must cover
// (see judge.go). kyverno exits 1 when a rule fails; any other non-zero
// exit is a crash.
func Kyverno(ctx context.Context, opts Options, policies []string, policyNames []string, render []byte, objects []Resource) ([]Finding, error) {
	out, _, err := run(ctx, "kyverno", []string{"kyverno", "kubectl-kyverno"}, opts, render, []int{0, 1}, func(r string) []string {
		args := append([]string{"apply"}, policies...)
		return append(args, "--resource", r, "--policy-report", "--remove-color")
	})
	if err != nil {
		return nil, err
	}
	findings, seen, judged, err := parseKyverno(out)
	if err != nil {
		return nil, &NoVerdictError{Tool: "kyverno", Reason: "unparseable output", Err: err}
	}
	if err := checkKyvernoCoverage(judged, objects, len(policyNames)); err != nil {
		return nil, err
	}
	return append(findings, unbound("kyverno", policyNames, seen)...), nil
}

// ParseKyvernoReport reads `kyverno apply --policy-report` output: optional
// "Policies Skipped"/"Invalid Policies" lists, then PolicyReport or
// ClusterPolicyReport YAML documents (wgpolicyk8s.io or openreports.io).
// It returns the failing, warning and erroring results, and the names of
// all policies with any result. Empty output means no result at all. A
// skipped or invalid policy did not run: an Error finding.
func ParseKyvernoReport(out []byte) ([]Finding, map[string]bool, error) {
	findings, seen, _, err := parseKyverno(out)
	return findings, seen, err
}

// parseKyverno is ParseKyvernoReport that also returns every resource a
// result names, passing ones too.
func parseKyverno(out []byte) (_ []Finding, _ map[string]bool, judged []Resource, _ error) {
	seen := map[string]bool{}
	text := string(out)
	start := strings.Index(text, "apiVersion:")
	var findings []Finding
	head := text
	if start >= 0 {
		head = text[:start]
	}
	skipped, err := kyvernoSkipped(head)
	if err != nil {
		return nil, nil, nil, err
	}
	findings = append(findings, skipped...)
	if start < 0 {
		return findings, seen, judged, nil
	}
	docs, err := kio.FromBytes([]byte(text[start:]))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read the policy report: %w", err)
	}
	reports := 0
	for _, d := range docs {
		if !strings.HasSuffix(d.GetKind(), "PolicyReport") && d.GetKind() != "Report" && d.GetKind() != "ClusterReport" {
			return nil, nil, nil, fmt.Errorf("read the policy report: unexpected %s %s", d.GetApiVersion(), d.GetKind())
		}
		reports++
		fs, err := kyvernoResults(d, seen, &judged)
		if err != nil {
			return nil, nil, nil, err
		}
		findings = append(findings, fs...)
	}
	if reports == 0 {
		return nil, nil, nil, errors.New("read the policy report: no report document")
	}
	return findings, seen, judged, nil
}

func kyvernoSkipped(head string) ([]Finding, error) {
	var out []Finding
	what := ""
	for _, line := range strings.Split(head, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.Trim(line, "-") == "":
		case strings.HasPrefix(line, "Warning: "):
			// A CLI notice (kyverno 1.19 warns that kyverno.io/v1
			// ClusterPolicy is deprecated): not a result, and the report
			// that follows still has to parse.
		case strings.HasPrefix(line, "Policies Skipped"):
			what = "skipped: required variables are not provided"
		case strings.HasPrefix(line, "Invalid Policies"):
			what = "invalid"
		case what != "" && len(line) > 2 && line[0] >= '0' && line[0] <= '9' && strings.Contains(line, ". "):
			_, name, _ := strings.Cut(line, ". ")
			out = append(out, Finding{Tool: "kyverno", Policy: name, Result: Error, Message: "kyverno did not run the policy: " + what})
		default:
			return nil, fmt.Errorf("read kyverno output: unexpected line %q", line)
		}
	}
	return out, nil
}

func kyvernoResults(d *yaml.RNode, seen map[string]bool, judged *[]Resource) ([]Finding, error) {
	results, err := d.Pipe(yaml.Lookup("results"))
	if err != nil || results == nil {
		return nil, err
	}
	elems, err := results.Elements()
	if err != nil {
		return nil, fmt.Errorf("read the policy report results: %w", err)
	}
	var out []Finding
	for _, r := range elems {
		policy, rule, result := field(r, "policy"), field(r, "rule"), field(r, "result")
		if policy == "" || result == "" {
			return nil, fmt.Errorf("read the policy report: a result without policy or result")
		}
		seen[policy] = true
		resources, _ := r.Pipe(yaml.Lookup("resources"))
		var items []*yaml.RNode
		if resources != nil {
			items, _ = resources.Elements()
		}
		for _, it := range items {
			*judged = append(*judged, Resource{APIVersion: field(it, "apiVersion"), Kind: field(it, "kind"), Namespace: field(it, "namespace"), Name: field(it, "name")})
		}
		var res Result
		switch result {
		case "pass", "skip":
			continue
		case "fail":
			res = Fail
		case "warn":
			res = Warning
		case "error":
			res = Error
		default:
			return nil, fmt.Errorf("read the policy report: unknown result %q", result)
		}
		f := Finding{Tool: "kyverno", Policy: policy, Rule: rule, Result: res, Message: field(r, "message")}
		for _, it := range items {
			g := f
			g.Resource = &Resource{APIVersion: field(it, "apiVersion"), Kind: field(it, "kind"), Namespace: field(it, "namespace"), Name: field(it, "name")}
			out = append(out, g)
		}
		if len(items) == 0 {
			out = append(out, f)
		}
	}
	return out, nil
}

func field(n *yaml.RNode, name string) string {
	v, err := n.Pipe(yaml.Lookup(name))
	if err != nil || v == nil {
		return ""
	}
	return yaml.GetValue(v)
}

// unbound reports the policies without any result.
func unbound(tool string, names []string, seen map[string]bool) []Finding {
	var out []Finding
	sorted := append([]string{}, names...)
	sort.Strings(sorted)
	for _, n := range sorted {
		if !seen[n] {
			out = append(out, Finding{Tool: tool, Policy: n, Result: Unbound,
				Message: fmt.Sprintf("%s reported no result for policy %s: it matches nothing in the render", tool, n)})
		}
	}
	return out
}

// PolicyNames lists the names of the policy documents in Kyverno policy
// files (ClusterPolicy, Policy, ValidatingAdmissionPolicy, …; bindings,
// exceptions and other helpers are left out).
func PolicyNames(files [][]byte) ([]string, error) {
	var names []string
	for _, f := range files {
		docs, err := kio.FromBytes(f)
		if err != nil {
			return nil, fmt.Errorf("read kyverno policy: %w", err)
		}
		for _, d := range docs {
			k := d.GetKind()
			if strings.HasSuffix(k, "Binding") || strings.HasSuffix(k, "Exception") || !strings.HasSuffix(k, "Policy") {
				continue
			}
			names = append(names, d.GetName())
		}
	}
	return names, nil
}
