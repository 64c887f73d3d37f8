package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// listLimit is how many entries of a long list (exclusions of one rule,
// the inputs one configuration decided) text output names before it
// summarises the rest with a count; -v names them all.
const listLimit = 5

// writeText prints findings grouped by input (named once, on the group's
// "== INPUT:" line), then by object (named once, on a header line, its
// findings indented below it); then what could not be evaluated, a
// per-rule summary, which configuration decided, and the verdict line. Quiet keeps the error findings, what had no
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
		t.findings(g.input, g.findings, o.Verbose)
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

// findings prints one input's findings: those about no object first, one
// a line; then each object once, as a header line naming it (and the file
// its findings were set in, when they share one), with its findings
// indented below it, one a line: severity, rule, field, message and the
// line (or file and line) that set it. The informational findings of a
// rule (each exclusion the caller decided) are summarised past listLimit,
// unless verbose.
func (t textPrinter) findings(input string, fs []finding.Finding, verbose bool) {
	infos := map[string][]finding.Finding{}
	var order []string
	for _, f := range fs {
		if f.Severity == finding.SeverityInfo {
			if _, ok := infos[f.Rule]; !ok {
				order = append(order, f.Rule)
			}
			infos[f.Rule] = append(infos[f.Rule], f)
		}
	}
	summarised := map[string]bool{}
	for rule, list := range infos {
		summarised[rule] = !verbose && len(list) > listLimit
	}
	var obj []finding.Finding
	for i := 0; i < len(fs); {
		j := i + 1
		for j < len(fs) && compareObjects(&fs[j], &fs[i]) == 0 {
			j++
		}
		obj = obj[:0]
		for _, f := range fs[i:j] {
			if f.Severity == finding.SeverityInfo && summarised[f.Rule] {
				continue
			}
			f.Message = withoutInputSuffix(f.Message, input)
			obj = append(obj, f)
		}
		i = j
		if len(obj) == 0 {
			continue
		}
		if obj[0].ResourceRef == nil {
			for _, f := range obj {
				t.line(severityColor(f.Severity), lineWithout(f, false))
			}
			continue
		}
		file := commonFile(obj)
		head := obj[0].ResourceRef.String()
		if file != "" {
			head += " [" + file + "]"
		}
		t.line("1", Escape(head))
		for _, f := range obj {
			t.line(severityColor(f.Severity), "  "+objectLine(f, file))
		}
	}
	for _, rule := range order {
		if !summarised[rule] {
			continue
		}
		list := infos[rule]
		names := make([]string, 0, listLimit)
		for _, f := range list[:listLimit] {
			names = append(names, Escape(f.ResourceRef.String()))
		}
		t.line("", fmt.Sprintf("INFO [%s] %d finding(s), e.g. %s and %d more (-v lists them): %s",
			rule, len(list), strings.Join(names, ", "), len(list)-listLimit, Escape(list[0].Message)))
	}
}

func severityColor(s finding.Severity) string {
	return map[finding.Severity]string{finding.SeverityError: "31", finding.SeverityWarning: "33"}[s]
}

// commonFile is the file every finding of an object names (and whose path
// its message does not already say), or "".
func commonFile(fs []finding.Finding) string {
	file := ""
	for _, f := range fs {
		if f.File == nil || f.File.Path == "" || namesFile(f.Message, f.File.Path) {
			return ""
		}
		if file != "" && f.File.Path != file {
			return ""
		}
		file = f.File.Path
	}
	return file
}

// objectLine is a finding under its object's header: severity, rule,
// field, message and where it was set ("line N" in the header's file or
// the file the message names, else the file and line). Escaped.
func objectLine(f finding.Finding, file string) string {
	var b strings.Builder
	b.Grow(len(f.Rule) + len(f.Message) + 64)
	b.WriteString(upperSeverity(f.Severity))
	b.WriteString(" [")
	b.WriteString(f.Rule)
	b.WriteByte(']')
	if f.Field != nil && f.Field.Path != "" {
		b.WriteByte(' ')
		b.WriteString(f.Field.Path)
	}
	b.WriteString(": ")
	b.WriteString(f.Message)
	switch {
	case f.File == nil || f.File.Path == "":
	case f.File.Line > 0 && namesFile(f.Message, f.File.Path):
		// the message names the file ("image set by FILE `images:`")
		b.WriteString(" [line ")
		b.WriteString(strconv.Itoa(f.File.Line))
		b.WriteByte(']')
	case namesFile(f.Message, f.File.Path):
	case f.File.Path == file && f.File.Line > 0:
		b.WriteString(" [line ")
		b.WriteString(strconv.Itoa(f.File.Line))
		b.WriteByte(']')
	case f.File.Path == file:
	case f.File.Line > 0:
		b.WriteString(" [")
		b.WriteString(f.File.Path)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(f.File.Line))
		b.WriteByte(']')
	default:
		b.WriteString(" [")
		b.WriteString(f.File.Path)
		b.WriteByte(']')
	}
	return Escape(b.String())
}

// namesFile reports whether msg names path as a whole, not as the end of
// another path ("d/nd.yaml" does not name "nd.yaml"): so a line printed
// after it is path's.
func namesFile(msg, path string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], path)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(path)
		if (j == 0 || strings.IndexByte(" (`'\"", msg[j-1]) >= 0) && (end == len(msg) || strings.IndexByte(" )`'\",;:", msg[end]) >= 0) {
			return true
		}
		i = j + 1
	}
}

// upperSeverity is strings.ToUpper of a severity, without a copy for the
// gate's own three.
func upperSeverity(s finding.Severity) string {
	switch s {
	case finding.SeverityError:
		return "ERROR"
	case finding.SeverityWarning:
		return "WARNING"
	case finding.SeverityInfo:
		return "INFO"
	}
	return strings.ToUpper(string(s))
}

// withoutInputSuffix drops from a message the " (source of Application
// NS/NAME …)" the pipeline adds to what an Application's source renders,
// when the group's title already names those Applications: text output
// names the input once.
func withoutInputSuffix(msg, input string) string {
	apps, ok := strings.CutPrefix(input, "Application ")
	if !ok {
		return msg
	}
	if i := strings.Index(apps, " from "); i >= 0 {
		apps = apps[:i]
	}
	return strings.TrimSuffix(msg, " (source of Application "+apps+")")
}

// inputGroup is the findings of one input, in object order.
type inputGroup struct {
	input    string
	findings []finding.Finding
}

// groupByInput groups findings by input in the order inputs first appear,
// and within an input by object (kind, namespace, name) and then in the
// order they were found. quiet keeps only error findings. Each finding is
// copied once, into its place.
func groupByInput(fs []finding.Finding, quiet bool) []inputGroup {
	var inputs []string
	var members [][]int // per input, the indexes of its findings in fs
	at := map[string]int{}
	for i := range fs {
		f := &fs[i]
		if quiet && f.Severity != finding.SeverityError {
			continue
		}
		g, ok := at[f.Input]
		if !ok {
			g = len(inputs)
			at[f.Input] = g
			inputs = append(inputs, f.Input)
			members = append(members, nil)
		}
		members[g] = append(members[g], i)
	}
	groups := make([]inputGroup, len(inputs))
	for g, order := range members {
		slices.SortStableFunc(order, func(a, b int) int { return compareObjects(&fs[a], &fs[b]) })
		out := make([]finding.Finding, len(order))
		for k, i := range order {
			out[k] = fs[i]
		}
		groups[g] = inputGroup{input: inputs[g], findings: out}
	}
	return groups
}

// compareObjects orders findings by object: kind, namespace, name (or,
// for an object the API server names, generateName); findings about no
// object (an empty render) first.
func compareObjects(a, b *finding.Finding) int {
	ra, rb := a.ResourceRef, b.ResourceRef
	switch {
	case ra == nil && rb == nil:
		return 0
	case ra == nil:
		return -1
	case rb == nil:
		return 1
	}
	if c := strings.Compare(ra.Kind, rb.Kind); c != 0 {
		return c
	}
	if c := strings.Compare(ra.Namespace, rb.Namespace); c != 0 {
		return c
	}
	if c := strings.Compare(ra.Name, rb.Name); c != 0 {
		return c
	}
	return strings.Compare(ra.GenerateName, rb.GenerateName)
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
