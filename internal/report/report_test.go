package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// testRules stand for the gate's rule list, which the plugin passes in.
var testRules = []Rule{
	{ID: "image-digest", Default: finding.SeverityError, Doc: "an image has no digest"},
	{ID: "render-empty", Default: finding.SeverityError, Doc: "the render is empty"},
	{ID: "rollout-single-writer", Default: finding.SeverityWarning, Doc: "two writers at once"},
	{ID: "schema", Default: finding.SeverityError, Doc: "the API server would reject the object"},
	{ID: "image-resolve", Default: finding.SeverityError, Doc: "a reference could not be resolved", NoVerdict: true},
}

func sample() *finding.Report {
	return &finding.Report{Resources: 3, Findings: []finding.Finding{
		{Rule: "image-digest", Severity: finding.SeverityError, Message: "image \"a:1\" is not pinned, 100%",
			ResourceRef: &finding.ResourceRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "prod"},
			Field:       &finding.Field{Path: "spec.template.spec.containers[0].image", CurrentValue: "a:1"},
			File:        &finding.File{Path: "overlays/prod/kustomization.yaml"}},
		{Rule: "rollout-single-writer", Severity: finding.SeverityWarning, Message: "two writers"},
	}}
}

func write(t *testing.T, format string, r *finding.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r, Options{Format: format, Rules: testRules}); err != nil {
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
	if sarif.Version != "2.1.0" || len(sarif.Runs[0].Tool.Driver.Rules) != len(testRules) ||
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
	// The error is a failure; the warning is not, without --fail-on
	// warning; three rules ran and found nothing.
	if suite.Failures != 1 || suite.Tests != 5 {
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
	warnOnly := &finding.Report{Findings: []finding.Finding{{Rule: "x", Severity: finding.SeverityWarning}}}
	if Summarize(warnOnly, false).Verdict != "pass" || Summarize(warnOnly, true).Verdict != "fail" {
		t.Error("--fail-on warning not honored")
	}
	failed := &finding.Report{Failures: []string{"rendering x: boom"}}
	if s := Summarize(failed, false); s.Verdict != "no-verdict" {
		t.Errorf("a failure gave verdict %q", s.Verdict)
	}
	if out := write(t, "json", failed); !strings.Contains(out, `"failures": [`) || !strings.Contains(out, "boom") {
		t.Errorf("json of a failure:\n%s", out)
	}
}

// TestJSONConfigIsStructured: the json report's config is one entry per
// configuration, layer by layer (source, path or kind/name, role, what it
// set), with its inputs and a one-line summary (docs/report.md).
func TestJSONConfigIsStructured(t *testing.T) {
	r := &finding.Report{Resources: 2, Configs: []finding.Config{{
		Sources: []finding.ConfigSource{
			{Source: finding.ConfigFile, Path: "ci/gate.yaml", Role: finding.RoleBase, Sets: []string{"images.allowedRegistries"}},
			{Source: finding.ConfigInTree, Kind: "Gate", Name: "prod", Role: finding.RoleTighten, Sets: []string{"render.minResources"}, Ignored: []string{"images.mirrors"}},
			{Source: finding.ConfigFlags, Role: finding.RoleOverride, Sets: []string{"--rule"}},
		},
		Inputs: []string{"-k overlays/prod"},
	}, {
		Sources: []finding.ConfigSource{{Source: finding.ConfigFile, Path: "ci/gate.yaml", Role: finding.RoleBase}},
		Inputs:  []string{"-k overlays/staging"},
	}}}
	var b strings.Builder
	if err := Write(&b, r, Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Config     []struct {
			Summary string `json:"summary"`
			Sources []struct {
				Source, Path, Kind, Name, Role string
				Sets, Ignored                  []string
			} `json:"sources"`
			Inputs []string `json:"inputs"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.APIVersion != APIVersion || len(doc.Config) != 2 {
		t.Fatalf("apiVersion %q, %d config entries:\n%s", doc.APIVersion, len(doc.Config), b.String())
	}
	c := doc.Config[0]
	if c.Summary != "--config ci/gate.yaml + in-tree Gate prod (may only tighten it; its registry settings are ignored) + flags" {
		t.Errorf("summary %q", c.Summary)
	}
	if len(c.Sources) != 3 || c.Sources[0].Source != "file" || c.Sources[0].Path != "ci/gate.yaml" || c.Sources[0].Role != "base" ||
		c.Sources[1].Kind != "Gate" || c.Sources[1].Name != "prod" || c.Sources[1].Role != "tighten" || c.Sources[1].Ignored[0] != "images.mirrors" ||
		c.Sources[2].Source != "flags" || c.Sources[2].Sets[0] != "--rule" || c.Inputs[0] != "-k overlays/prod" {
		t.Errorf("config[0] = %+v", c)
	}
	if c := doc.Config[1]; c.Summary != "--config ci/gate.yaml" || c.Inputs[0] != "-k overlays/staging" {
		t.Errorf("config[1] = %+v", c)
	}
	// Text names each configuration's inputs when there is more than one.
	b.Reset()
	if err := Write(&b, r, Options{Format: "text"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "config: --config ci/gate.yaml (for -k overlays/staging)\n") {
		t.Errorf("text:\n%s", b.String())
	}
}
