package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	sigsyaml "sigs.k8s.io/yaml"
)

// Formats lists the output formats.
var Formats = []string{"text", "json", "yaml", "sarif", "junit", "github"}

// Options shape the output.
type Options struct {
	Format        string
	Color         bool
	FailOnWarning bool
	Version       string
	// Rules describes every rule of the gate: SARIF lists them as the
	// tool's rules, JUnit as a passing test case each when it did not fire.
	Rules []Rule
}

// Rule is what the printers say about a rule.
type Rule struct {
	ID      string
	Default finding.Severity
	Doc     string
}

// Document is the json/yaml output shape (README "Use: the kubectl plugin", -o json).
type Document struct {
	Results []finding.Finding `json:"results"`
	Summary Summary           `json:"summary"`
	// Failures lists what could not be evaluated (verdict no-verdict).
	Failures []string `json:"failures,omitempty"`
	// Config says, per input, which configuration decided.
	Config []string `json:"config,omitempty"`
}

// Summary counts a run.
type Summary struct {
	Resources int `json:"resources"`
	Errors    int `json:"errors"`
	Warnings  int `json:"warnings"`
	// Waived counts findings an exception or annotation waived; Existing
	// those the baseline holds; Fixed the baseline entries no longer found.
	Waived   int    `json:"waived,omitempty"`
	Existing int    `json:"existing,omitempty"`
	Fixed    int    `json:"fixed,omitempty"`
	Verdict  string `json:"verdict"`
}

// Summarize returns the summary of a report.
func Summarize(r *finding.Report, failOnWarning bool) Summary {
	return Summary{
		Resources: r.Resources,
		Errors:    r.Count(finding.SeverityError),
		Warnings:  r.Count(finding.SeverityWarning),
		Waived:    r.Suppressed(finding.SuppressedByException) + r.Suppressed(finding.SuppressedByAnnotation),
		Existing:  r.Suppressed(finding.SuppressedByBaseline),
		Fixed:     r.Fixed,
		Verdict:   r.Verdict(failOnWarning),
	}
}

// Write prints a report in the chosen format.
func Write(w io.Writer, r *finding.Report, o Options) error {
	doc := Document{Results: r.Findings, Summary: Summarize(r, o.FailOnWarning), Failures: r.Failures, Config: r.Configs}
	if doc.Results == nil {
		doc.Results = []finding.Finding{}
	}
	switch o.Format {
	case "", "text":
		return writeText(w, doc, o.Color)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case "yaml":
		b, err := sigsyaml.Marshal(doc)
		if err != nil {
			return fmt.Errorf("encoding yaml report: %w", err)
		}
		_, err = w.Write(b)
		return err
	case "sarif":
		return writeSARIF(w, doc, o.Version, o.Rules)
	case "junit":
		return writeJUnit(w, doc, o.Rules)
	case "github":
		return writeGitHub(w, doc)
	}
	return fmt.Errorf("unknown output format %q (one of %s)", o.Format, strings.Join(Formats, ", "))
}

// ValidFormat reports whether f is a known format.
func ValidFormat(f string) bool { return slices.Contains(Formats, f) }

// Line is the one-line human form of a finding, used by text output and the
// KRM function's stderr.
func Line(f finding.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s]", strings.ToUpper(string(f.Severity)), f.Rule)
	if f.ResourceRef != nil {
		fmt.Fprintf(&b, " %s", f.ResourceRef)
	}
	if f.Field != nil && f.Field.Path != "" {
		fmt.Fprintf(&b, " %s", f.Field.Path)
	}
	fmt.Fprintf(&b, ": %s", f.Message)
	if f.File != nil && f.File.Path != "" && !strings.Contains(f.Message, f.File.Path) {
		if f.File.Line > 0 {
			fmt.Fprintf(&b, " [%s:%d]", f.File.Path, f.File.Line)
		} else {
			fmt.Fprintf(&b, " [%s]", f.File.Path)
		}
	}
	if f.Input != "" {
		fmt.Fprintf(&b, " (input: %s)", f.Input)
	}
	return b.String()
}

func writeText(w io.Writer, doc Document, color bool) error {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	for _, f := range counted(doc.Results) {
		code := "33"
		if f.Severity == finding.SeverityError {
			code = "31"
		}
		if _, err := fmt.Fprintln(w, paint(code, Line(f))); err != nil {
			return err
		}
	}
	if err := writeSuppressedText(w, doc); err != nil {
		return err
	}
	for _, f := range doc.Failures {
		if _, err := fmt.Fprintln(w, paint("35", "NO VERDICT: "+f)); err != nil {
			return err
		}
	}
	for _, c := range doc.Config {
		if _, err := fmt.Fprintln(w, "config: "+c); err != nil {
			return err
		}
	}
	s := doc.Summary
	code := map[string]string{finding.VerdictPass: "32", finding.VerdictFail: "31", finding.VerdictNoVerdict: "35"}[s.Verdict]
	_, err := fmt.Fprintf(w, "%s: %d resource(s), %d error(s), %d warning(s)%s\n",
		paint(code, strings.ToUpper(s.Verdict)), s.Resources, s.Errors, s.Warnings, summarySuppressed(s))
	return err
}
