package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	sigsyaml "sigs.k8s.io/yaml"
)

// Formats lists the output formats.
var Formats = []string{"text", "json", "yaml", "sarif", "junit", "github", "gitlab"}

// Options shape the output.
type Options struct {
	Format string
	// Color paints text output (a TTY, without NO_COLOR or --no-color).
	Color bool
	// Quiet keeps, in text output, only error findings, what had no
	// verdict and the verdict line (-q).
	Quiet bool
	// Verbose lists every entry of long lists that text output would
	// otherwise summarise with a count (-v).
	Verbose       bool
	FailOnWarning bool
	Version       string
	// Rules describes every rule of the gate: SARIF lists them as the
	// tool's rules, JUnit as a passing test case each when it did not fire.
	Rules []Rule
	// FallbackLocation places a SARIF result that has neither a file of its
	// own nor an input file (stdin): a path relative to the working
	// directory.
	FallbackLocation string
	// BaseDir is the working directory: SARIF URIs of absolute paths under
	// it are made relative to it.
	BaseDir string
}

// APIVersion names the shape of the json/yaml report (Document); it
// changes when a field changes meaning or goes away, not when one is added.
const APIVersion = "kubectl-gate.dev/report/v1"

// Document is the json/yaml output shape (docs/report.md).
type Document struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Summary first: a reader of the JSON sees the verdict at the top.
	Summary Summary           `json:"summary"`
	Results []finding.Finding `json:"results"`
	// Failures lists what could not be evaluated (verdict no-verdict).
	Failures []string `json:"failures,omitempty"`
	// Config says which configuration decided each input: one entry per
	// configuration, layer by layer (docs/report.md).
	Config []ConfigEntry `json:"config,omitempty"`
	// RulesRun lists the rules that ran (not configured off); empty when
	// the caller did not say.
	RulesRun []string `json:"rulesRun,omitempty"`
}

// ran says which rules ran: those the report lists, else every rule.
func (d Document) ran(rules []Rule) map[string]bool {
	out := map[string]bool{}
	for _, id := range d.RulesRun {
		out[id] = true
	}
	if len(d.RulesRun) == 0 {
		for _, r := range rules {
			out[r.ID] = true
		}
	}
	return out
}

// ConfigEntry is one configuration that decided some inputs: its layers
// (source, path, role, what it set), its inputs, and the same in one line.
type ConfigEntry struct {
	// Summary is the configuration in one line, without its inputs.
	Summary string `json:"summary"`
	finding.Config
}

func configEntries(cs []finding.Config) []ConfigEntry {
	out := make([]ConfigEntry, 0, len(cs))
	for _, c := range cs {
		out = append(out, ConfigEntry{Summary: c.String(), Config: c})
	}
	return out
}

// line is the entry in one line for the line-oriented formats: its
// summary, and its inputs when the run had more than one configuration
// (the first limit of them and a count past that; limit < 0 names all).
func (c ConfigEntry) line(configs, limit int) string {
	if configs <= 1 {
		return Escape(c.Summary)
	}
	inputs := c.Inputs
	more := 0
	if limit >= 0 && len(inputs) > limit {
		inputs, more = inputs[:limit], len(inputs)-limit
	}
	s := fmt.Sprintf("%s (for %s", c.Summary, strings.Join(inputs, "; "))
	if more > 0 {
		s += fmt.Sprintf(" and %d more input(s); -v lists them", more)
	}
	return Escape(s + ")")
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
	doc := Document{APIVersion: APIVersion, Kind: "Report", Results: r.Findings, Summary: Summarize(r, o.FailOnWarning),
		Failures: r.Failures, Config: configEntries(r.Configs), RulesRun: r.RulesRun}
	if doc.Results == nil {
		doc.Results = []finding.Finding{}
	}
	switch o.Format {
	case "", "text":
		return writeText(w, doc, o)
	case "json":
		return writeIndented(w, doc)
	case "yaml":
		b, err := sigsyaml.Marshal(doc)
		if err != nil {
			return fmt.Errorf("encoding yaml report: %w", err)
		}
		_, err = w.Write(b)
		return err
	case "sarif":
		return writeSARIF(w, doc, o)
	case "junit":
		return writeJUnit(w, doc, o)
	case "github":
		return writeGitHub(w, doc)
	case "gitlab":
		return writeGitLab(w, doc, o)
	}
	return fmt.Errorf("unknown output format %q (one of %s)", o.Format, strings.Join(Formats, ", "))
}

// ValidFormat reports whether f is a known format.
func ValidFormat(f string) bool { return slices.Contains(Formats, f) }

// Line is the one-line human form of a finding, naming its input, used by
// the KRM function's stderr and the messages of the CI formats. Every
// string from an input in it is escaped (Escape): it is always one line.
func Line(f finding.Finding) string { return lineWithout(f, true) }

// lineWithout is Line, without the input when withInput is false (text
// output names the input once per group).
func lineWithout(f finding.Finding, withInput bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s]", strings.ToUpper(string(f.Severity)), f.Rule)
	if f.ResourceRef != nil {
		fmt.Fprintf(&b, " %s", f.ResourceRef)
	}
	if f.Field != nil && f.Field.Path != "" {
		fmt.Fprintf(&b, " %s", f.Field.Path)
	}
	fmt.Fprintf(&b, ": %s", f.Message)
	if f.File != nil && f.File.Path != "" && !namesFile(f.Message, f.File.Path) {
		if f.File.Line > 0 {
			fmt.Fprintf(&b, " [%s:%d]", f.File.Path, f.File.Line)
		} else {
			fmt.Fprintf(&b, " [%s]", f.File.Path)
		}
	}
	if withInput && f.Input != "" {
		fmt.Fprintf(&b, " (input: %s)", f.Input)
	}
	return Escape(b.String())
}

// writeIndented writes v as a json.Encoder indenting by two spaces writes
// it (the same bytes), into a buffer sized once: the encoder grew its
// buffers by doubling, which for a SARIF report of 20,000 results copied
// hundreds of megabytes.
func writeIndented(w io.Writer, v any) error {
	compact, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	var out bytes.Buffer
	out.Grow(2*len(compact) + 1)
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return fmt.Errorf("indenting the report: %w", err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}
