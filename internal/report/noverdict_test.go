package report

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// noVerdictRuns are the two ways a run ends without a verdict: something
// could not be evaluated at all (a render failed), and a finding that means
// the gate could not finish (the registry did not answer).
func noVerdictRuns() map[string]*finding.Report {
	return map[string]*finding.Report{
		"render failed": {Failures: []string{"-k overlays/prod: rendering: accumulating resources: missing.yaml: no such file"}},
		"registry down": {Resources: 2, Findings: []finding.Finding{{
			Rule: "image-resolve", Severity: finding.SeverityError, NoVerdict: true, Input: "-k overlays/prod",
			Message:     `container "web": resolving ghcr.io/shop/web:1.4: connection refused`,
			ResourceRef: &finding.ResourceRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "prod"},
		}}},
	}
}

// TestNoVerdictReadsAsNoPassInEveryFormat runs every output format on a
// no-verdict run: none may read as a pass to a CI that reads the report
// rather than the exit code (issue 10).
func TestNoVerdictReadsAsNoPassInEveryFormat(t *testing.T) {
	for name, r := range noVerdictRuns() {
		for _, format := range Formats {
			t.Run(name+"/"+format, func(t *testing.T) {
				out := write(t, format, r)
				switch format {
				case "text":
					if !strings.Contains(out, "NO-VERDICT:") || strings.Contains(out, "PASS") {
						t.Errorf("text:\n%s", out)
					}
				case "json", "yaml":
					if !strings.Contains(out, "no-verdict") {
						t.Errorf("%s has no no-verdict:\n%s", format, out)
					}
				case "sarif":
					var doc struct {
						Runs []struct {
							Invocations []struct {
								ExecutionSuccessful        *bool `json:"executionSuccessful"`
								ToolExecutionNotifications []struct {
									Level   string `json:"level"`
									Message struct{ Text string }
								} `json:"toolExecutionNotifications"`
							} `json:"invocations"`
						} `json:"runs"`
					}
					if err := json.Unmarshal([]byte(out), &doc); err != nil {
						t.Fatal(err)
					}
					inv := doc.Runs[0].Invocations
					if len(inv) != 1 || inv[0].ExecutionSuccessful == nil || *inv[0].ExecutionSuccessful ||
						len(inv[0].ToolExecutionNotifications) == 0 || inv[0].ToolExecutionNotifications[0].Level != "error" ||
						!strings.Contains(inv[0].ToolExecutionNotifications[0].Message.Text, "no verdict") {
						t.Errorf("sarif invocation = %+v\n%s", inv, out)
					}
				case "junit":
					var suite struct {
						Errors int `xml:"errors,attr"`
						Cases  []struct {
							Name  string `xml:"name,attr"`
							Error *struct {
								Type string `xml:"type,attr"`
							} `xml:"error"`
						} `xml:"testcase"`
					}
					if err := xml.Unmarshal([]byte(out), &suite); err != nil {
						t.Fatal(err)
					}
					if suite.Errors == 0 || suite.Cases[0].Error == nil || suite.Cases[0].Error.Type != "no-verdict" {
						t.Errorf("junit:\n%s", out)
					}
				case "github":
					if !strings.Contains(out, "::error title=kubectl-gate no verdict::NO VERDICT: ") {
						t.Errorf("github:\n%s", out)
					}
				case "gitlab":
					if !strings.Contains(out, `"severity": "blocker"`) {
						t.Errorf("gitlab:\n%s", out)
					}
				default:
					t.Fatalf("format %s has no no-verdict assertion: add one", format)
				}
			})
		}
	}
}

// TestPassingRunIsSuccessful keeps the other side: a pass is an invocation
// that succeeded, with no error test case and no error annotation.
func TestPassingRunIsSuccessful(t *testing.T) {
	r := &finding.Report{Resources: 1}
	if s := write(t, "sarif", r); !strings.Contains(s, `"executionSuccessful": true`) {
		t.Errorf("sarif:\n%s", s)
	}
	if j := write(t, "junit", r); strings.Contains(j, "<error") {
		t.Errorf("junit:\n%s", j)
	}
	if g := write(t, "github", r); g != "" {
		t.Errorf("github: %q", g)
	}
}

func TestInputAndLineInEveryFormat(t *testing.T) {
	r := sample()
	r.Findings[0].Input = "-k overlays/prod"
	r.Findings[0].File.Line = 7
	if s := write(t, "sarif", r); !strings.Contains(s, `"startLine": 7`) || !strings.Contains(s, `"input": "-k overlays/prod"`) {
		t.Errorf("sarif:\n%s", s)
	}
	if g := write(t, "github", r); !strings.Contains(g, "file=overlays/prod/kustomization.yaml,line=7,") || !strings.Contains(g, "(input: -k overlays/prod)") {
		t.Errorf("github:\n%s", g)
	}
	if j := write(t, "json", r); !strings.Contains(j, `"input": "-k overlays/prod"`) || !strings.Contains(j, `"line": 7`) {
		t.Errorf("json:\n%s", j)
	}
	for _, f := range []string{"text", "junit", "yaml"} {
		if out := write(t, f, r); !strings.Contains(out, "-k overlays/prod") {
			t.Errorf("%s names no input:\n%s", f, out)
		}
	}
}

// An exclusion the caller decided is listed, not reported as a problem: a
// GitHub notice, no JUnit failure.
func TestInfoIsListedNotFailed(t *testing.T) {
	r := &finding.Report{Resources: 1, Findings: []finding.Finding{{Rule: "render-empty", Severity: finding.SeverityInfo,
		Message: `excluded by spec.argocd.exclude "redis"`}}}
	if g := write(t, "github", r); !strings.HasPrefix(g, "::notice title=render-empty::INFO") {
		t.Errorf("github: %q", g)
	}
	if j := write(t, "junit", r); strings.Contains(j, "<failure") || !strings.Contains(j, `name="render-empty"`) {
		t.Errorf("junit:\n%s", j)
	}
}

// TestConfigInEveryFormat: every format says which configuration decided
// (issue 9: the caller's config, and whether an in-tree Gate could only
// tighten it).
func TestConfigInEveryFormat(t *testing.T) {
	r := &finding.Report{Resources: 1, Configs: []finding.Config{{Sources: []finding.ConfigSource{
		{Source: finding.ConfigFile, Path: "ci/gate.yaml", Role: finding.RoleBase},
		{Source: finding.ConfigInTree, Kind: "Gate", Name: "prod", Role: finding.RoleTighten},
	}, Inputs: []string{"-k overlays/prod"}}}}
	for _, format := range Formats {
		if format == "gitlab" {
			continue // GitLab's code quality report is a list of issues: no place for the run's config (the job's log has the text report)
		}
		t.Run(format, func(t *testing.T) {
			if out := write(t, format, r); !strings.Contains(out, "ci/gate.yaml + in-tree Gate prod (may only tighten it)") {
				t.Errorf("%s does not say which config decided:\n%s", format, out)
			}
		})
	}
}
