package plugin

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
)

// runRules lists the rules; --markdown prints the README table.
func runRules(args []string, s Streams) int {
	fs := pflag.NewFlagSet("kubectl gate rules", pflag.ContinueOnError)
	markdown := fs.Bool("markdown", false, "print a Markdown table (the README's rule table)")
	if done, code := parse(fs, args, s.Err); done {
		return code
	}
	if *markdown {
		fmt.Fprint(s.Out, RuleTable())
		return ExitPass
	}
	for _, r := range all.Rules() {
		fmt.Fprintf(s.Out, "%-34s %-8s %s\n", r.ID, r.Default, r.Doc)
	}
	return ExitPass
}

// RuleTable is the README's rule table, generated from the registry.
func RuleTable() string {
	var b strings.Builder
	b.WriteString("| id | default | fires when | the outage it prevents |\n|---|---|---|---|\n")
	for _, r := range all.Rules() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.ID, r.Default, esc(r.Doc), esc(r.Outage))
	}
	return b.String()
}

func esc(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// reportRules describes every rule for the SARIF and JUnit printers.
func reportRules() []report.Rule {
	rs := all.Rules()
	out := make([]report.Rule, len(rs))
	for i, r := range rs {
		out[i] = report.Rule{ID: r.ID, Default: r.Default, Doc: r.Doc}
	}
	return out
}
