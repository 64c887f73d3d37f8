package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/report/sarifcheck"
)

// scenarios are the report shapes a run can have; every format of each is
// checked against its readers (SARIF: the 2.1.0 schema and GitHub's upload
// constraints).
func scenarios() map[string]*finding.Report {
	out := map[string]*finding.Report{
		"findings": sample(),
		"pass":     {Resources: 4},
		"hostile":  hostile(),
		"no location of its own": {Resources: 0, Findings: []finding.Finding{
			{Rule: "render-empty", Severity: finding.SeverityError, Message: "the render is empty", Input: "-k overlays/prod", InputFile: "overlays/prod/kustomization.yaml"},
			{Rule: "schema", Severity: finding.SeverityError, Message: "unknown field", ResourceRef: &finding.ResourceRef{Kind: "Deployment", Name: "web"}},
			{Rule: "image-digest", Severity: finding.SeverityError, Message: "abs", File: &finding.File{Path: "/tmp/x/deploy.yaml"}},
		}},
	}
	for name, r := range noVerdictRuns() {
		out["no verdict: "+name] = r
	}
	waived := sample()
	waived.Findings[0].Suppressed = &finding.Suppression{Kind: finding.SuppressedByAnnotation, Reason: "migrating\n::error::x", Owner: "team-shop",
		Expires: "2027-01-31", Source: "annotation kubectl-gate.dev/waive on Deployment/web (ns prod)"}
	waived.Findings[1].Suppressed = &finding.Suppression{Kind: finding.SuppressedByBaseline, Source: "baseline gate-baseline.json"}
	out["waived and existing"] = waived
	return out
}

func TestSARIFIsWhatGitHubAccepts(t *testing.T) {
	for name, r := range scenarios() {
		t.Run(name, func(t *testing.T) {
			out := write(t, "sarif", r)
			if err := sarifcheck.Check([]byte(out)); err != nil {
				t.Errorf("%v\n%s", err, out)
			}
		})
	}
}

// TestSARIFCheckerCatchesWhatGitHubRefuses: the checker the tests rely on
// is red on what GitHub refuses (a result without a location, an absolute
// path, no help) and on a schema violation.
func TestSARIFCheckerCatchesWhatGitHubRefuses(t *testing.T) {
	good := write(t, "sarif", sample())
	for name, edit := range map[string][2]string{
		"no location":      {`"locations": [`, `"locations_": [`},
		"a bare abs path":  {`"uri": "overlays/prod/kustomization.yaml"`, `"uri": "/overlays/prod/kustomization.yaml"`},
		"no help":          {`"help": {`, `"help_": {`},
		"schema: bad kind": {`"level": "warning"`, `"level": "severe"`},
		"no fingerprint":   {`"partialFingerprints": {`, `"partialFingerprints_": {`},
	} {
		bad := strings.Replace(good, edit[0], edit[1], 1)
		if bad == good {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		if err := sarifcheck.Check([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSARIFLocations: the file and line that set the value; else the
// input's own file at line 1; else the fallback; the object as a logical
// location; relative, percent-encoded URIs.
func TestSARIFLocations(t *testing.T) {
	r := scenarios()["no location of its own"]
	var log struct {
		Runs []struct {
			Results []struct {
				Locations []sarifLocation `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	var b bytes.Buffer
	if err := Write(&b, r, Options{Format: "sarif", Rules: testRules, FallbackLocation: "render.yaml", BaseDir: "/tmp"}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, res := range log.Runs[0].Results {
		l := res.Locations[0]
		got = append(got, l.PhysicalLocation.ArtifactLocation.URI)
		if l.PhysicalLocation.Region.StartLine != 1 {
			t.Errorf("start line %d", l.PhysicalLocation.Region.StartLine)
		}
	}
	want := []string{"overlays/prod/kustomization.yaml", "render.yaml", "x/deploy.yaml"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("uris %v, want %v", got, want)
	}
	for in, want := range map[string]string{
		"overlays/my app/k.yaml": "overlays/my%20app/k.yaml",
		"a:b/k.yaml":             "./a:b/k.yaml",
		"x/#?%.yaml":             "x/%23%3F%25.yaml",
		"/abs/k.yaml":            "file:///abs/k.yaml",
		"../up/(1).yaml":         "../up/%281%29.yaml",
	} {
		if got := ArtifactURI(in); got != want {
			t.Errorf("ArtifactURI(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSARIFFingerprintIgnoresTheLine: the same finding on another line is
// the same alert; another object is another.
func TestSARIFFingerprintIgnoresTheLine(t *testing.T) {
	a := sample().Findings[0]
	b := a
	b.File = &finding.File{Path: a.File.Path, Line: 40}
	c := a
	c.ResourceRef = &finding.ResourceRef{Kind: "Deployment", Name: "api", Namespace: "prod"}
	if Fingerprint(a) != Fingerprint(b) || Fingerprint(a) == Fingerprint(c) {
		t.Error("fingerprints do not follow the finding")
	}
}

func TestRuleHelp(t *testing.T) {
	r := Rule{ID: "image-digest", Default: finding.SeverityError, Doc: "an image has no digest", Outage: "a tag moves", Fix: "pin it"}
	md := RuleHelp(r, true)
	for _, want := range []string{"**Why:** a tag moves.", "**How to fix:** pin it.", "`--rule image-digest=warning`", "`spec.rules: {image-digest: warning}`"} {
		if !strings.Contains(md, want) {
			t.Errorf("help lacks %q:\n%s", want, md)
		}
	}
	r.NoVerdict = true
	if !strings.Contains(RuleHelp(r, false), "cannot be waived") {
		t.Error("a no-verdict rule's help offers a waiver")
	}
	if doc := RulesDocument([]Rule{r}); !strings.Contains(doc, "### image-digest\n") {
		t.Errorf("document:\n%s", doc)
	}
}

type junitOut struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
	Cases    []struct {
		Name      string    `xml:"name,attr"`
		Classname string    `xml:"classname,attr"`
		Failure   *struct{} `xml:"failure"`
		Error     *struct{} `xml:"error"`
		Skipped   *struct{} `xml:"skipped"`
	} `xml:"testcase"`
}

// TestJUnitCountsAreTheFindings: three error findings (two on one object)
// are three failures; a rule that did not run is skipped, not passed; a
// warning fails only with --fail-on warning; a no-verdict finding is an
// error.
func TestJUnitCountsAreTheFindings(t *testing.T) {
	web := &finding.ResourceRef{Kind: "Deployment", Name: "web", Namespace: "prod"}
	r := &finding.Report{Resources: 2, RulesRun: []string{"image-digest", "rollout-single-writer"}, Findings: []finding.Finding{
		{Rule: "image-digest", Severity: finding.SeverityError, Message: "a", ResourceRef: web, Field: &finding.Field{Path: "c[0]"}},
		{Rule: "image-digest", Severity: finding.SeverityError, Message: "b", ResourceRef: web, Field: &finding.Field{Path: "c[0]"}},
		{Rule: "image-digest", Severity: finding.SeverityError, Message: "c", ResourceRef: &finding.ResourceRef{Kind: "Job", Name: "j"}},
		{Rule: "rollout-single-writer", Severity: finding.SeverityWarning, Message: "w"},
	}}
	for _, c := range []struct {
		failOnWarning            bool
		tests, failures, skipped int
	}{{false, 7, 3, 3}, {true, 7, 4, 3}} {
		var b bytes.Buffer
		if err := Write(&b, r, Options{Format: "junit", Rules: testRules, FailOnWarning: c.failOnWarning}); err != nil {
			t.Fatal(err)
		}
		var s junitOut
		if err := xml.Unmarshal(b.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		if s.Tests != c.tests || s.Failures != c.failures || s.Skipped != c.skipped || s.Errors != 0 {
			t.Errorf("fail on warning %v: %+v\n%s", c.failOnWarning, s, b.String())
		}
		names := map[string]bool{}
		for _, tc := range s.Cases {
			if names[tc.Name] {
				t.Errorf("two test cases named %q", tc.Name)
			}
			names[tc.Name] = true
			if tc.Name == "render-empty" && tc.Skipped == nil {
				t.Error("render-empty did not run but is not skipped")
			}
		}
	}
	var s junitOut
	if err := xml.Unmarshal([]byte(write(t, "junit", noVerdictRuns()["registry down"])), &s); err != nil {
		t.Fatal(err)
	}
	if s.Errors != 1 || s.Failures != 0 {
		t.Errorf("registry down: %+v", s)
	}
}

func TestJSONShape(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(write(t, "json", sample())), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["apiVersion"] != APIVersion || doc["kind"] != "Report" || doc["summary"].(map[string]any)["verdict"] != "fail" {
		t.Errorf("json = %v", doc)
	}
}

// TestTextGroupsByObject: each object is named once, on a header line with
// the file its findings were set in, its findings indented below it with
// their lines; a finding set in another file names it; an Application
// source's findings do not repeat the group's Applications; many
// configurations' inputs are summarised with a count.
func TestTextGroupsByObject(t *testing.T) {
	const in = "Application argocd/shop spec.source from apps/shop"
	web := &finding.ResourceRef{Kind: "Deployment", Name: "web", Namespace: "shop"}
	r := &finding.Report{Resources: 2, Findings: []finding.Finding{
		{Rule: "image-digest", Severity: finding.SeverityError, Input: in, ResourceRef: web,
			Field:   &finding.Field{Path: "spec.template.spec.containers[0].image"},
			Message: `image "web:1" is not pinned by digest (source of Application argocd/shop spec.source)`, File: &finding.File{Path: "apps/shop/web.yaml", Line: 19}},
		{Rule: "image-registry", Severity: finding.SeverityError, Input: in, ResourceRef: web,
			Field:   &finding.Field{Path: "spec.template.spec.containers[1].image"},
			Message: `registry "docker.io" is not allowed (source of Application argocd/shop spec.source)`, File: &finding.File{Path: "apps/shop/web.yaml", Line: 23}},
		{Rule: "schema", Severity: finding.SeverityError, Input: in, ResourceRef: &finding.ResourceRef{Kind: "Service", Name: "web", Namespace: "shop"},
			Field: &finding.Field{Path: "spec.ports[0].port"}, Message: "must be an integer", File: &finding.File{Path: "apps/shop/svc.yaml", Line: 7}},
		{Rule: "image-digest", Severity: finding.SeverityError, Input: in, ResourceRef: &finding.ResourceRef{Kind: "Service", Name: "web", Namespace: "shop"},
			Message: "not an image", File: &finding.File{Path: "apps/shop/patch.yaml", Line: 3}},
	}}
	// Two configurations, 75 inputs each.
	for g := range 2 {
		c := finding.Config{Sources: []finding.ConfigSource{
			{Source: finding.ConfigDefaults, Role: finding.RoleBase},
			{Source: finding.ConfigInTree, Kind: "Gate", Name: fmt.Sprint("g", g), Role: finding.RoleTighten}}}
		for i := g; i < 150; i += 2 {
			c.Inputs = append(c.Inputs, fmt.Sprint("-k app-", i))
		}
		r.Configs = append(r.Configs, c)
	}
	text := write(t, "text", r)
	want := "== " + in + ": 4 error(s), 0 warning(s)\n" +
		"Deployment/web (ns shop) [apps/shop/web.yaml]\n" +
		"  ERROR [image-digest] spec.template.spec.containers[0].image: image \"web:1\" is not pinned by digest [line 19]\n" +
		"  ERROR [image-registry] spec.template.spec.containers[1].image: registry \"docker.io\" is not allowed [line 23]\n" +
		"Service/web (ns shop)\n" +
		"  ERROR [schema] spec.ports[0].port: must be an integer [apps/shop/svc.yaml:7]\n" +
		"  ERROR [image-digest]: not an image [apps/shop/patch.yaml:3]\n" +
		"by rule: image-digest 2 error; image-registry 1 error; schema 1 error\n" +
		"config: built-in defaults + in-tree Gate g0 (may only tighten it) (for -k app-0; -k app-2; -k app-4; -k app-6; -k app-8 and 70 more input(s); -v lists them)\n" +
		"config: built-in defaults + in-tree Gate g1 (may only tighten it) (for -k app-1; -k app-3; -k app-5; -k app-7; -k app-9 and 70 more input(s); -v lists them)\n" +
		"FAIL: 2 resource(s), 4 error(s), 0 warning(s)\n"
	if text != want {
		t.Errorf("text:\n%s\nwant:\n%s", text, want)
	}
	var b bytes.Buffer
	if err := Write(&b, r, Options{Format: "text", Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "-k app-148)\n") {
		t.Errorf("-v does not name every input of a configuration:\n%s", b.String())
	}
}

// TestTextScales: findings grouped by input (named once), a per-rule
// summary, many exclusions summarised with a count; -q keeps errors and the
// verdict; -v lists every exclusion.
func TestTextScales(t *testing.T) {
	r := &finding.Report{Resources: 200}
	for _, in := range []string{"-k overlays/a", "-k overlays/b"} {
		for _, name := range []string{"web", "api"} {
			r.Findings = append(r.Findings, finding.Finding{Rule: "image-digest", Severity: finding.SeverityError, Input: in,
				Message: "not pinned", ResourceRef: &finding.ResourceRef{Kind: "Deployment", Name: name}})
		}
		r.Findings = append(r.Findings, finding.Finding{Rule: "api-deprecated", Severity: finding.SeverityWarning, Input: in, Message: "deprecated"})
	}
	for i := range 150 {
		r.Findings = append(r.Findings, finding.Finding{Rule: "argocd-source-not-rendered", Severity: finding.SeverityInfo, Input: "-f apps",
			Message: "excluded by --exclude-app", ResourceRef: &finding.ResourceRef{Kind: "Application", Name: "app-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)}})
	}
	text := write(t, "text", r)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) > 16 {
		t.Errorf("%d lines for 156 findings:\n%s", len(lines), text)
	}
	for _, want := range []string{
		"== -k overlays/a: 2 error(s), 1 warning(s)\nWARNING [api-deprecated]: deprecated\nDeployment/api\n  ERROR [image-digest]: not pinned\nDeployment/web\n",
		"== -f apps: 0 error(s), 0 warning(s), 150 info\nINFO [argocd-source-not-rendered] 150 finding(s), e.g. Application/app-a, ",
		"and 145 more (-v lists them)",
		"by rule: argocd-source-not-rendered 150 info; image-digest 4 error; api-deprecated 2 warning\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "(input: ") {
		t.Errorf("the input is repeated on finding lines:\n%s", text)
	}
	var b bytes.Buffer
	if err := Write(&b, r, Options{Format: "text", Quiet: true}); err != nil {
		t.Fatal(err)
	}
	if q := b.String(); strings.Contains(q, "WARNING") || strings.Contains(q, "INFO") || strings.Contains(q, "by rule") || !strings.Contains(q, "FAIL: 200 resource(s), 4 error(s), 2 warning(s)") {
		t.Errorf("-q:\n%s", q)
	}
	b.Reset()
	if err := Write(&b, r, Options{Format: "text", Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n  INFO [argocd-source-not-rendered]: excluded by --exclude-app\n"); n != 150 {
		t.Errorf("-v lists %d exclusions", n)
	}
}

// TestObjectsNamedOnCreate: two Jobs with no name and another
// generateName (Argo CD hooks) are two objects: the text report gave them
// one header (the first's), so the second's finding read as the first's,
// and SARIF named both "Job/" with an empty name.
func TestObjectsNamedOnCreate(t *testing.T) {
	r := &finding.Report{Resources: 2}
	for i, g := range []string{"migrate-a-", "migrate-b-"} {
		r.Findings = append(r.Findings, finding.Finding{Rule: "image-digest", Severity: finding.SeverityError, Message: "not pinned",
			ResourceRef: &finding.ResourceRef{APIVersion: "batch/v1", Kind: "Job", GenerateName: g},
			File:        &finding.File{Path: "jobs.yaml", Line: 10 + 12*i}})
	}
	var b bytes.Buffer
	if err := Write(&b, r, Options{Format: "text"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Job generateName: migrate-a- [jobs.yaml]\n  ERROR [image-digest]: not pinned [line 10]\n", "Job generateName: migrate-b- [jobs.yaml]\n  ERROR [image-digest]: not pinned [line 22]\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := Write(&b, r, Options{Format: "sarif", Rules: testRules}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name": "migrate-a-*"`, `"fullyQualifiedName": "Job/migrate-b-*"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("SARIF lacks %s", want)
		}
	}
}

// TestLineOfTheFileTheMessageNames: "[line N]" follows a message that
// names the finding's file, never one that names another path ending in
// it (render-duplicate "from d/nd.yaml" about nd.yaml: the line read as
// d/nd.yaml's).
func TestLineOfTheFileTheMessageNames(t *testing.T) {
	for _, c := range []struct{ msg, path, want string }{
		{"image set by o/kustomization.yaml `images:`", "o/kustomization.yaml", "[line 6]"},
		{"the render already holds this object (from d/nd.yaml)", "nd.yaml", "[nd.yaml:6]"},
		{"(image set by Application web spec.source.kustomize.images[0] in apps/web.yaml)", "apps/web.yaml", "[line 6]"},
	} {
		r := &finding.Report{Resources: 2, Findings: []finding.Finding{
			{Rule: "r", Severity: finding.SeverityError, Message: c.msg, ResourceRef: &finding.ResourceRef{Kind: "ConfigMap", Name: "a"}, File: &finding.File{Path: c.path, Line: 6}},
			{Rule: "r", Severity: finding.SeverityError, Message: "other", ResourceRef: &finding.ResourceRef{Kind: "ConfigMap", Name: "a"}, File: &finding.File{Path: "x.yaml", Line: 1}},
		}}
		var b bytes.Buffer
		if err := Write(&b, r, Options{Format: "text"}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.msg+" "+c.want+"\n") {
			t.Errorf("%q: want %s after it:\n%s", c.msg, c.want, b.String())
		}
	}
}
