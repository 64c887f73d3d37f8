package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

type junitSuite struct {
	XMLName  xml.Name `xml:"testsuite"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
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
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes one test case per finding — its rule (the classname)
// and object — and one per rule that ran and found nothing; the counts are
// the findings':
//
//   - an error finding is a failure, a warning one too with --fail-on
//     warning (else the case passes and says the warning in system-out);
//   - a finding that means the gate could not finish (image-resolve), and
//     each input that could not be evaluated, is an error;
//   - an exclusion the caller decided (info) is skipped, as is a waived or
//     baselined finding and every rule that did not run (off, or not a
//     rule of this command).
//
// So no CI reads a no-verdict run as passed, and failures equal the error
// findings.
func writeJUnit(w io.Writer, doc Document, o Options) error {
	suite := junitSuite{Name: "kubectl-gate"}
	if len(doc.Config) > 0 {
		suite.Properties = &junitProperties{}
		for _, c := range doc.Config {
			suite.Properties.Property = append(suite.Properties.Property, junitProperty{Name: "config", Value: c.line(len(doc.Config), -1)})
		}
	}
	for i, f := range doc.Failures {
		name := "no-verdict"
		if len(doc.Failures) > 1 {
			name += " " + strconv.Itoa(i+1)
		}
		suite.Cases = append(suite.Cases, junitCase{Name: name, Classname: "kubectl-gate",
			Error: &junitFailure{Message: "no verdict: " + Escape(f), Type: "no-verdict", Text: Escape(f) + "\n"}})
	}
	names := map[string]int{}
	found := map[string]bool{}
	for _, f := range doc.Results {
		if f.Suppressed != nil {
			// Waived or in the baseline: reported, skipped, not counted.
			suite.Cases = append(suite.Cases, junitSkipped(f))
			continue
		}
		found[f.Rule] = true
		c := junitCase{Name: caseName(f, names), Classname: f.Rule}
		switch {
		case f.NoVerdict && f.Severity == finding.SeverityError:
			c.Error = &junitFailure{Message: Escape(f.Message), Type: "no-verdict", Text: Line(f) + "\n"}
		case f.Severity == finding.SeverityError, f.Severity == finding.SeverityWarning && o.FailOnWarning:
			c.Failure = &junitFailure{Message: Escape(f.Message), Type: string(f.Severity), Text: Line(f) + "\n"}
		case f.Severity == finding.SeverityInfo:
			c.Skipped = &junitSkip{Message: Line(f)}
		default:
			c.SystemOut = Line(f) + "\n"
		}
		suite.Cases = append(suite.Cases, c)
	}
	ran := doc.ran(o.Rules)
	for _, r := range o.Rules {
		switch {
		case found[r.ID]:
		case ran[r.ID]:
			suite.Cases = append(suite.Cases, junitCase{Name: r.ID, Classname: r.ID})
		default:
			suite.Cases = append(suite.Cases, junitCase{Name: r.ID, Classname: r.ID,
				Skipped: &junitSkip{Message: "the rule did not run (off, or not a check of this command)"}})
		}
	}
	if doc.Summary.Verdict == finding.VerdictNoVerdict && len(doc.Failures) == 0 && !hasNoVerdictFinding(doc) {
		suite.Cases = append(suite.Cases, junitCase{Name: "no-verdict", Classname: "kubectl-gate",
			Error: &junitFailure{Message: "no verdict: the gate could not finish", Type: "no-verdict"}})
	}
	for _, c := range suite.Cases {
		switch {
		case c.Error != nil:
			suite.Errors++
		case c.Failure != nil:
			suite.Failures++
		case c.Skipped != nil:
			suite.Skipped++
		}
	}
	suite.Tests = len(suite.Cases)
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

// caseName names a finding's test case by its object and field, numbered
// when one object has several findings of a rule at the same field.
func caseName(f finding.Finding, seen map[string]int) string {
	parts := []string{f.Rule}
	if f.ResourceRef != nil {
		parts = append(parts, f.ResourceRef.String())
	}
	if f.Field != nil && f.Field.Path != "" {
		parts = append(parts, f.Field.Path)
	}
	if f.Input != "" {
		parts = append(parts, "(input: "+f.Input+")")
	}
	name := Escape(strings.Join(parts, " "))
	seen[name]++
	if n := seen[name]; n > 1 {
		name += " #" + strconv.Itoa(n)
	}
	return name
}

func hasNoVerdictFinding(doc Document) bool {
	for _, f := range doc.Results {
		if f.NoVerdict && f.Severity == finding.SeverityError {
			return true
		}
	}
	return false
}
