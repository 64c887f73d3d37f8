package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// listLimit is how many entries of a long list (exclusions of one rule,
// the inputs one configuration decided) text output names before it
// summarises the rest with a count; -v names them all.
const listLimit = 5

// writeText prints findings grouped by input (named once, on the group's
// "== INPUT:" line), then by object, each finding on one line that still
// names its object and rule (so `grep ^ERROR` finds lines that stand on
// their own); then what
// could not be evaluated, a per-rule summary, which configuration decided,
// and the verdict line. Quiet keeps the error findings, what had no
// verdict and the verdict line. Every string from an input is escaped
// (Escape): a manifest cannot start a line of its own.
func writeText(w io.Writer, doc Document, o Options) error {
	bw := bufio.NewWriter(w)
	t := textPrinter{w: bw, color: o.Color}
	groups := groupByInput(counted(doc.Results), o.Quiet)
	for _, g := range groups {
		if len(groups) > 1 || g.input != "" {
			t.line("", "== "+inputTitle(g.input)+": "+counts(g.findings))
		}
		t.findings(g.findings, o.Verbose)
	}
	if !o.Quiet {
		if err := writeSuppressedText(bw, doc); err != nil {
			return err
		}
	}
	for _, f := range doc.Failures {
		for i, l := range textLines(f) {
			if i == 0 {
				l = "NO VERDICT: " + l
			}
			t.line("35", l)
		}
	}
	if !o.Quiet {
		if s := ruleSummary(counted(doc.Results)); s != "" {
			t.line("", "by rule: "+s)
		}
		limit := listLimit
		if o.Verbose {
			limit = -1
		}
		for _, c := range doc.Config {
			t.line("", "config: "+c.line(len(doc.Config), limit))
		}
	}
	s := doc.Summary
	code := map[string]string{finding.VerdictPass: "32", finding.VerdictFail: "31", finding.VerdictNoVerdict: "35"}[s.Verdict]
	t.line("", fmt.Sprintf("%s: %d resource(s), %d error(s), %d warning(s)%s",
		t.paint(code, strings.ToUpper(s.Verdict)), s.Resources, s.Errors, s.Warnings, summarySuppressed(s)))
	return bw.Flush()
}

type textPrinter struct {
	w     *bufio.Writer
	color bool
}

func (t textPrinter) paint(code, s string) string {
	if !t.color || code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (t textPrinter) line(code, s string) {
	t.w.WriteString(t.paint(code, s))
	t.w.WriteByte('\n')
}

// findings prints one group's findings; the informational ones of a rule
// (each exclusion the caller decided) are summarised past listLimit.
func (t textPrinter) findings(fs []finding.Finding, verbose bool) {
	infos := map[string][]finding.Finding{}
	var order []string
	for _, f := range fs {
		if f.Severity == finding.SeverityInfo && !verbose {
			if _, ok := infos[f.Rule]; !ok {
				order = append(order, f.Rule)
			}
			infos[f.Rule] = append(infos[f.Rule], f)
			continue
		}
		code := map[finding.Severity]string{finding.SeverityError: "31", finding.SeverityWarning: "33"}[f.Severity]
		t.line(code, lineWithout(f, false))
	}
	for _, rule := range order {
		list := infos[rule]
		if len(list) <= listLimit {
			for _, f := range list {
				t.line("", lineWithout(f, false))
			}
			continue
		}
		names := make([]string, 0, listLimit)
		for _, f := range list[:listLimit] {
			names = append(names, Escape(f.ResourceRef.String()))
		}
		t.line("", fmt.Sprintf("INFO [%s] %d finding(s), e.g. %s and %d more (-v lists them): %s",
			rule, len(list), strings.Join(names, ", "), len(list)-listLimit, Escape(list[0].Message)))
	}
}

// inputGroup is the findings of one input, in object order.
type inputGroup struct {
	input    string
	findings []finding.Finding
}

// groupByInput groups findings by input in the order inputs first appear,
// and within an input by object (kind, namespace, name) and then in the
// order they were found. quiet keeps only error findings.
func groupByInput(fs []finding.Finding, quiet bool) []inputGroup {
	var groups []inputGroup
	at := map[string]int{}
	for _, f := range fs {
		if quiet && f.Severity != finding.SeverityError {
			continue
		}
		i, ok := at[f.Input]
		if !ok {
			i = len(groups)
			at[f.Input] = i
			groups = append(groups, inputGroup{input: f.Input})
		}
		groups[i].findings = append(groups[i].findings, f)
	}
	for _, g := range groups {
		sort.SliceStable(g.findings, func(i, j int) bool {
			return objectKey(g.findings[i]) < objectKey(g.findings[j])
		})
	}
	return groups
}

// objectKey orders findings by object; findings about no object (an empty
// render) come first.
func objectKey(f finding.Finding) string {
	if f.ResourceRef == nil {
		return ""
	}
	r := f.ResourceRef
	return r.Kind + "\x00" + r.Namespace + "\x00" + r.Name
}

func inputTitle(input string) string {
	if input == "" {
		return "(no input named)"
	}
	return Escape(input)
}

func counts(fs []finding.Finding) string {
	n := map[finding.Severity]int{}
	for _, f := range fs {
		n[f.Severity]++
	}
	s := fmt.Sprintf("%d error(s), %d warning(s)", n[finding.SeverityError], n[finding.SeverityWarning])
	if n[finding.SeverityInfo] > 0 {
		s += fmt.Sprintf(", %d info", n[finding.SeverityInfo])
	}
	return s
}

// ruleSummary counts findings per rule and severity, rules with the most
// findings first: "image-digest 12 error(s); api-deprecated 3 warning(s)".
func ruleSummary(fs []finding.Finding) string {
	type key struct {
		rule string
		sev  finding.Severity
	}
	n := map[key]int{}
	var keys []key
	for _, f := range fs {
		k := key{f.Rule, f.Severity}
		if n[k] == 0 {
			keys = append(keys, k)
		}
		n[k]++
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if n[keys[i]] != n[keys[j]] {
			return n[keys[i]] > n[keys[j]]
		}
		return keys[i].rule < keys[j].rule
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d %s", Escape(k.rule), n[k], k.sev)
	}
	return strings.Join(parts, "; ")
}

// textLines splits a message the gate wrote over several lines (a cause and
// its details) into lines to print: each escaped, each continuation
// indented (by two spaces, unless it already is), and one that a CI runner would read as a workflow
// command after its blanks marked as text, as SafeLines does. A string
// from an input cannot start a line of its own: its newlines are escaped
// where it was quoted; only the gate's own line breaks remain.
func textLines(s string) []string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		p = Escape(p)
		if i > 0 && !strings.HasPrefix(p, " ") {
			p = "  " + p
		}
		if strings.HasPrefix(strings.TrimSpace(p), "::") {
			p = "(output) " + p
		}
		parts[i] = p
	}
	return parts
}
