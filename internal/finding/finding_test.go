package finding_test

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// TestConfigure: off drops a rule's findings, a setting replaces the
// default, rules without a setting keep theirs.
func TestConfigure(t *testing.T) {
	fs := []finding.Finding{
		{Rule: "image-digest", Severity: finding.SeverityError},
		{Rule: "rollout-single-writer", Severity: finding.SeverityWarning},
		{Rule: "render-empty", Severity: finding.SeverityError},
	}
	got := finding.Configure(fs, map[string]string{"image-digest": "off", "rollout-single-writer": "error"})
	if len(got) != 2 || got[0].Rule != "rollout-single-writer" || got[0].Severity != finding.SeverityError ||
		got[1].Rule != "render-empty" || got[1].Severity != finding.SeverityError {
		t.Errorf("Configure = %+v", got)
	}
}

// TestVerdict: no-verdict beats fail beats pass; warnings fail only with
// failOnWarning; a no-verdict finding turned into a warning does not stop
// the run.
func TestVerdict(t *testing.T) {
	warn := finding.Finding{Rule: "w", Severity: finding.SeverityWarning}
	errF := finding.Finding{Rule: "e", Severity: finding.SeverityError}
	nv := finding.Finding{Rule: "image-resolve", Severity: finding.SeverityError, NoVerdict: true}
	cases := []struct {
		name   string
		r      finding.Report
		strict bool
		want   string
	}{
		{"empty", finding.Report{}, false, finding.VerdictPass},
		{"warning", finding.Report{Findings: []finding.Finding{warn}}, false, finding.VerdictPass},
		{"warning, fail on warning", finding.Report{Findings: []finding.Finding{warn}}, true, finding.VerdictFail},
		{"error", finding.Report{Findings: []finding.Finding{warn, errF}}, false, finding.VerdictFail},
		{"could not resolve", finding.Report{Findings: []finding.Finding{errF, nv}}, false, finding.VerdictNoVerdict},
		{"a failure", finding.Report{Failures: []string{"render failed"}}, false, finding.VerdictNoVerdict},
		{"no-verdict lowered to a warning", finding.Report{Findings: []finding.Finding{{Rule: "image-resolve", Severity: finding.SeverityWarning, NoVerdict: true}}}, false, finding.VerdictPass},
	}
	for _, c := range cases {
		if got := c.r.Verdict(c.strict); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	r := finding.Report{Findings: []finding.Finding{warn}, Resources: 2}
	r.Merge(&finding.Report{Findings: []finding.Finding{errF}, Resources: 3, Failures: []string{"x"}})
	if len(r.Findings) != 2 || r.Resources != 5 || len(r.Failures) != 1 || r.Count(finding.SeverityError) != 1 {
		t.Errorf("Merge = %+v", r)
	}
	if (&finding.ResourceRef{Kind: "Deployment", Name: "web", Namespace: "prod"}).String() != "Deployment/web (ns prod)" {
		t.Error("ResourceRef.String")
	}
}
