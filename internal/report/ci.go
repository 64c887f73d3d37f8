package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

func writeGitHub(w io.Writer, doc Document) error {
	for _, f := range doc.Results {
		cmd := "error"
		if f.Severity != finding.SeverityError {
			cmd = "warning"
		}
		var props []string
		if f.File != nil && f.File.Path != "" {
			props = append(props, "file="+escapeProp(f.File.Path))
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
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes one testcase per (rule, resource) that has findings,
// and one passing testcase per rule without findings.
func writeJUnit(w io.Writer, doc Document, rules []Rule) error {
	suite := junitSuite{Name: "kubectl-gate"}
	index := map[string]int{}
	for _, f := range doc.Results {
		name := f.Rule + " " + f.ResourceRef.String()
		i, ok := index[name]
		if !ok {
			i = len(suite.Cases)
			index[name] = i
			suite.Cases = append(suite.Cases, junitCase{Name: strings.TrimSpace(name), Classname: f.Rule})
		}
		c := &suite.Cases[i]
		if c.Failure == nil {
			c.Failure = &junitFailure{Message: f.Message, Type: string(f.Severity)}
		}
		c.Failure.Text += Line(f) + "\n"
	}
	fired := map[string]bool{}
	for _, f := range doc.Results {
		fired[f.Rule] = true
	}
	for _, r := range rules {
		if !fired[r.ID] {
			suite.Cases = append(suite.Cases, junitCase{Name: r.ID, Classname: r.ID})
		}
	}
	suite.Tests = len(suite.Cases)
	suite.Failures = len(index)
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
			res["locations"] = []any{map[string]any{"physicalLocation": map[string]any{
				"artifactLocation": map[string]string{"uri": f.File.Path},
			}}}
		}
		results = append(results, res)
	}
	out := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":    map[string]any{"driver": map[string]any{"name": "kubectl-gate", "version": version, "rules": sarifRules}},
			"results": results,
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
