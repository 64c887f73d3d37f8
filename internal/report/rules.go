package report

import (
	"fmt"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// Rule is what the printers say about a rule: SARIF lists each as a tool
// rule with its help, JUnit as a test case, and docs/rules.md as a section.
type Rule struct {
	ID      string
	Default finding.Severity
	// Doc says when it fires, Outage what it prevents, Fix how to make it
	// pass; each one line.
	Doc, Outage, Fix string
	Family           string
	// NoVerdict: its findings mean the gate could not decide; they cannot
	// be lowered or turned off. MayNoVerdict: some of them are.
	NoVerdict, MayNoVerdict bool
	// Unwaivable: no exception, annotation or baseline waives it.
	Unwaivable bool
}

// RuleHelp is a rule's help: why it exists, how to fix what it found and
// how to waive it, in Markdown (docs/rules.md, SARIF help.markdown) or
// plain text (SARIF help.text, `kubectl gate rules ID`).
func RuleHelp(r Rule, markdown bool) string {
	code := func(s string) string {
		if markdown {
			return "`" + s + "`"
		}
		return s
	}
	head := func(s string) string {
		if markdown {
			return "**" + s + "**"
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s.\n\n", head("Fires when:"), r.Doc)
	if r.Outage != "" {
		fmt.Fprintf(&b, "%s %s.\n\n", head("Why:"), r.Outage)
	}
	if r.Fix != "" {
		fmt.Fprintf(&b, "%s %s.\n\n", head("How to fix:"), r.Fix)
	}
	fmt.Fprintf(&b, "%s %s\n", head("How to waive:"), waive(r, code))
	return b.String()
}

// waive says how a rule's findings are lowered or turned off — or that
// they cannot be, for what means the gate could not decide.
func waive(r Rule, code func(string) string) string {
	if r.NoVerdict {
		return "it cannot be waived: its findings mean the gate could not decide (exit 3), and no flag, config, exception or in-tree Gate lowers them."
	}
	s := fmt.Sprintf("for one run, %s (or %s); for every run, %s in the trusted config (%s). An in-tree Gate inside the rendered tree may only raise a severity unless that config sets %s.",
		code("--rule "+r.ID+"=warning"), code("=off"), code("spec.rules: {"+r.ID+": warning}"), code("--config"), code("allowInTreeLoosening: true"))
	if r.Unwaivable {
		s += " No exception, waiver annotation or baseline waives it."
	} else {
		s += fmt.Sprintf(" For one object: an exception in the trusted config (%s with owner, reason and expires), or a %s annotation where that config allows them; findings already there can be kept as existing with %s.",
			code("spec.exceptions"), code("kubectl-gate.dev/waive"), code("--baseline"))
	}
	if r.MayNoVerdict {
		s += " Off drops only its findings that are a verdict: those meaning something was not checked stay errors (exit 3)."
	}
	return s
}

// RulesDocument is docs/rules.md: a section per rule, in the registry's
// order, each with its id as the heading (the anchor SARIF helpUri points
// to).
func RulesDocument(rules []Rule) string {
	var b strings.Builder
	b.WriteString("# kubectl-gate rules\n\n")
	b.WriteString("<!-- Generated from the rule registry by `go test ./plugin -run RulesDoc -update`; do not edit. -->\n\n")
	b.WriteString("Each rule has an id, a default severity and the help below; SARIF output links each finding's rule here.\n")
	b.WriteString("`kubectl gate rules ID` prints one rule's section, `kubectl gate rules -o json` all of them.\n\n")
	family := ""
	for _, r := range rules {
		if r.Family != family && r.Family != "" {
			family = r.Family
			fmt.Fprintf(&b, "## %s\n\n", family)
		}
		fmt.Fprintf(&b, "### %s\n\nDefault severity: %s.\n\n%s\n", r.ID, r.Default, RuleHelp(r, true))
	}
	return b.String()
}
