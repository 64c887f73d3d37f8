package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

func writeGitHub(w io.Writer, doc Document) error {
	if err := writeGitHubFindings(w, doc); err != nil {
		return err
	}
	for _, c := range doc.Config {
		msg := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(c)
		if _, err := fmt.Fprintf(w, "::notice title=kubectl-gate config::%s\n", msg); err != nil {
			return err
		}
	}
	// A CI that reads annotations, not the exit code, must not see green:
	// every cause of a no-verdict is an error annotation of its own.
	if doc.Summary.Verdict != finding.VerdictNoVerdict {
		return nil
	}
	for _, c := range noVerdictCauses(doc) {
		msg := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace("NO VERDICT: " + c)
		if _, err := fmt.Fprintf(w, "::error title=kubectl-gate no verdict::%s\n", msg); err != nil {
			return err
		}
	}
	return nil
}

// noVerdictCauses lists why a run has no verdict: what could not be
// evaluated, then the findings that mean the gate could not finish.
func noVerdictCauses(doc Document) []string {
	out := append([]string(nil), doc.Failures...)
	for _, f := range doc.Results {
		if f.NoVerdict && f.Severity == finding.SeverityError {
			out = append(out, Line(f))
		}
	}
	if len(out) == 0 {
		out = append(out, "the gate could not finish")
	}
	return out
}

func writeGitHubFindings(w io.Writer, doc Document) error {
	for _, f := range doc.Results {
		if f.Suppressed != nil {
			if err := githubSuppressed(w, f); err != nil {
				return err
			}
			continue
		}
		cmd := "error"
		switch f.Severity {
		case finding.SeverityWarning:
			cmd = "warning"
		case finding.SeverityInfo:
			cmd = "notice" // an exclusion the caller decided: listed, not a problem
		}
		var props []string
		if f.File != nil && f.File.Path != "" {
			props = append(props, "file="+escapeProp(f.File.Path))
			if f.File.Line > 0 {
				props = append(props, "line="+strconv.Itoa(f.File.Line))
			}
		}
		props = append(props, "title="+escapeProp(f.Rule))
		msg := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(Line(f))
		if _, err := fmt.Fprintf(w, "::%s %s::%s\n", cmd, strings.Join(props, ","), msg); err != nil {
			return err
		}
	}
	return nil
}

func escapeProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

type junitSuite struct {
	XMLName  xml.Name `xml:"testsuite"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	// Properties says which configuration decided.
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkip    `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes one testcase per (rule, resource) that has findings,
// and one passing testcase per rule without findings. A run without a
// verdict adds a "no-verdict" testcase in error, so no CI reads it as a
// pass; a finding that means the gate could not finish (image-resolve) is
// an error, not a failure.
func writeJUnit(w io.Writer, doc Document, rules []Rule) error {
	suite := junitSuite{Name: "kubectl-gate"}
	if len(doc.Config) > 0 {
		suite.Properties = &junitProperties{}
		for _, c := range doc.Config {
			suite.Properties.Property = append(suite.Properties.Property, junitProperty{Name: "config", Value: c})
		}
	}
	if doc.Summary.Verdict == finding.VerdictNoVerdict {
		causes := noVerdictCauses(doc)
		suite.Cases = append(suite.Cases, junitCase{Name: "no-verdict", Classname: "kubectl-gate",
			Error: &junitFailure{Message: "no verdict: " + causes[0], Type: "no-verdict", Text: strings.Join(causes, "\n") + "\n"}})
		suite.Errors++
	}
	index := map[string]int{}
	for _, f := range doc.Results {
		if f.Severity == finding.SeverityInfo {
			continue // listed by the other formats; not a failure
		}
		if f.Suppressed != nil {
			suite.Cases = append(suite.Cases, junitSkipped(f))
			continue
		}
		name := f.Rule + " " + f.ResourceRef.String()
		i, ok := index[name]
		if !ok {
			i = len(suite.Cases)
			index[name] = i
			suite.Cases = append(suite.Cases, junitCase{Name: strings.TrimSpace(name), Classname: f.Rule})
		}
		c := &suite.Cases[i]
		if f.NoVerdict && f.Severity == finding.SeverityError {
			if c.Error == nil {
				c.Error = &junitFailure{Message: f.Message, Type: "no-verdict"}
			}
			c.Error.Text += Line(f) + "\n"
			continue
		}
		if c.Failure == nil {
			c.Failure = &junitFailure{Message: f.Message, Type: string(f.Severity)}
		}
		c.Failure.Text += Line(f) + "\n"
	}
	fired := map[string]bool{}
	for _, f := range doc.Results {
		fired[f.Rule] = fired[f.Rule] || f.Severity != finding.SeverityInfo && f.Suppressed == nil
	}
	for _, r := range rules {
		if !fired[r.ID] {
			suite.Cases = append(suite.Cases, junitCase{Name: r.ID, Classname: r.ID})
		}
	}
	suite.Tests = len(suite.Cases)
	for _, i := range index {
		if suite.Cases[i].Failure != nil {
			suite.Failures++
		}
		if suite.Cases[i].Error != nil {
			suite.Errors++
		}
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suite); err != nil {
		return fmt.Errorf("encoding junit report: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// writeSARIF writes SARIF 2.1.0 with one rule per rule id.
func writeSARIF(w io.Writer, doc Document, version string, rules []Rule) error {
	type msg struct {
		Text string `json:"text"`
	}
	var sarifRules []map[string]any
	for _, r := range rules {
		sarifRules = append(sarifRules, map[string]any{
			"id": r.ID, "shortDescription": msg{r.Doc},
			"defaultConfiguration": map[string]string{"level": level(r.Default)},
		})
	}
	results := []map[string]any{}
	for _, f := range doc.Results {
		res := map[string]any{"ruleId": f.Rule, "level": level(f.Severity), "message": msg{Line(f)}}
		if f.File != nil && f.File.Path != "" {
			phys := map[string]any{"artifactLocation": map[string]string{"uri": f.File.Path}}
			if f.File.Line > 0 {
				phys["region"] = map[string]int{"startLine": f.File.Line}
			}
			res["locations"] = []any{map[string]any{"physicalLocation": phys}}
		}
		if f.Input != "" {
			res["properties"] = map[string]string{"input": f.Input}
		}
		if f.Suppressed != nil {
			res["suppressions"] = sarifSuppressions(f)
		}
		results = append(results, res)
	}
	// SARIF readers judge a run by its invocation: a run without a verdict
	// did not execute successfully, and each cause is a tool notification.
	invocation := map[string]any{"executionSuccessful": doc.Summary.Verdict != finding.VerdictNoVerdict}
	if len(doc.Config) > 0 {
		// Which configuration decided (a pull request's own Gate may only
		// tighten the caller's): said in every format.
		invocation["properties"] = map[string]any{"config": doc.Config}
	}
	if doc.Summary.Verdict == finding.VerdictNoVerdict {
		var notes []any
		for _, c := range noVerdictCauses(doc) {
			notes = append(notes, map[string]any{"level": "error", "message": msg{"no verdict: " + c}})
		}
		invocation["toolExecutionNotifications"] = notes
	}
	out := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":        map[string]any{"driver": map[string]any{"name": "kubectl-gate", "version": version, "rules": sarifRules}},
			"results":     results,
			"invocations": []any{invocation},
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func level(s finding.Severity) string {
	switch s {
	case finding.SeverityError:
		return "error"
	case finding.SeverityWarning:
		return "warning"
	}
	return "note"
}
