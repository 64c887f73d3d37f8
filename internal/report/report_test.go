package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

func sample() *gate.Report {
	return &gate.Report{Resources: 3, Findings: []rules.Finding{
		{Rule: "image-digest", Severity: rules.SeverityError, Message: "image \"a:1\" is not pinned, 100%",
			ResourceRef: &rules.ResourceRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "prod"},
			Field:       &rules.Field{Path: "spec.template.spec.containers[0].image", CurrentValue: "a:1"},
			File:        &rules.File{Path: "overlays/prod/kustomization.yaml"}},
		{Rule: "rollout-single-writer", Severity: rules.SeverityWarning, Message: "two writers"},
	}}
}

func write(t *testing.T, format string, r *gate.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r, Options{Format: format}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestFormats(t *testing.T) {
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string } `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID string `json:"ruleId"`
				Level  string `json:"level"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(write(t, "sarif", sample())), &sarif); err != nil {
		t.Fatal(err)
	}
	if sarif.Version != "2.1.0" || len(sarif.Runs[0].Tool.Driver.Rules) != len(rules.All()) ||
		sarif.Runs[0].Results[0].RuleID != "image-digest" || sarif.Runs[0].Results[1].Level != "warning" {
		t.Errorf("sarif = %+v", sarif)
	}
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(write(t, "junit", sample())), &suite); err != nil {
		t.Fatal(err)
	}
	if suite.Failures != 2 || suite.Tests != len(rules.All())-2+2 {
		t.Errorf("junit = %+v", suite)
	}
	gh := write(t, "github", sample())
	if !strings.HasPrefix(gh, "::error file=overlays/prod/kustomization.yaml,title=image-digest::") || !strings.Contains(gh, "100%25") ||
		!strings.Contains(gh, "::warning title=rollout-single-writer::") {
		t.Errorf("github =\n%s", gh)
	}
	text := write(t, "text", sample())
	if !strings.Contains(text, "FAIL: 3 resource(s), 1 error(s), 1 warning(s)") || strings.Contains(text, "\x1b[") {
		t.Errorf("text =\n%s", text)
	}
	if y := write(t, "yaml", sample()); !strings.Contains(y, "verdict: fail") {
		t.Errorf("yaml =\n%s", y)
	}
	if err := Write(&bytes.Buffer{}, sample(), Options{Format: "xml"}); err == nil {
		t.Error("an unknown format was accepted")
	}
}

func TestVerdicts(t *testing.T) {
	warnOnly := &gate.Report{Findings: []rules.Finding{{Rule: "x", Severity: rules.SeverityWarning}}}
	if Summarize(warnOnly, false).Verdict != "pass" || Summarize(warnOnly, true).Verdict != "fail" {
		t.Error("--fail-on warning not honored")
	}
	failed := &gate.Report{Failures: []string{"rendering x: boom"}}
	if s := Summarize(failed, false); s.Verdict != "no-verdict" {
		t.Errorf("a failure gave verdict %q", s.Verdict)
	}
	if out := write(t, "json", failed); !strings.Contains(out, `"failures": [`) || !strings.Contains(out, "boom") {
		t.Errorf("json of a failure:\n%s", out)
	}
}
