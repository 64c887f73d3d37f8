package plugin

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
)

// runRules lists the rules (-o text|json|markdown, --markdown = the
// README's table); `rules ID` prints one rule's help.
func runRules(args []string, s Streams) int {
	fs := pflag.NewFlagSet("kubectl gate rules", pflag.ContinueOnError)
	markdown := fs.Bool("markdown", false, "print a Markdown table (the README's rule table; = -o markdown)")
	output := fs.StringP("output", "o", "text", "output format: text|json|markdown")
	if done, code := parse(fs, args, s, 1); done {
		return code
	}
	if *markdown {
		*output = "markdown"
	}
	rules := reportRules()
	if id := fs.Arg(0); id != "" {
		i := slices.IndexFunc(rules, func(r report.Rule) bool { return r.ID == id })
		if i < 0 {
			return fail(s.Err, usageErr("rules", "unknown rule id %q%s", id, suggest(id, ruleIDs())))
		}
		rules = rules[i : i+1]
		if *output == "text" {
			r := rules[0]
			fmt.Fprintf(s.Out, "%s (default %s, %s)\n\n%s\nMore: %s#%s\n", r.ID, r.Default, r.Family, report.RuleHelp(r, false), report.RulesDocURI, r.ID)
			return ExitPass
		}
	}
	switch *output {
	case "markdown":
		if fs.NArg() > 0 {
			fmt.Fprint(s.Out, report.RuleHelp(rules[0], true))
			return ExitPass
		}
		fmt.Fprint(s.Out, RuleTable())
	case "json":
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rulesJSON(rules)); err != nil {
			return fail(s.Err, err)
		}
	case "text":
		for _, r := range rules {
			fmt.Fprintf(s.Out, "%-34s %-8s %s\n", r.ID, r.Default, r.Doc)
		}
	default:
		return fail(s.Err, usageErr("--output", "%q is not text, json or markdown%s", *output, suggest(*output, []string{"text", "json", "markdown"})))
	}
	return ExitPass
}

// ruleJSON is one rule in `rules -o json`.
type ruleJSON struct {
	ID        string `json:"id"`
	Family    string `json:"family"`
	Default   string `json:"default"`
	Doc       string `json:"doc"`
	Outage    string `json:"outage"`
	Fix       string `json:"fix"`
	NoVerdict bool   `json:"noVerdict,omitempty"`
	HelpURI   string `json:"helpUri"`
}

func rulesJSON(rules []report.Rule) map[string]any {
	out := make([]ruleJSON, len(rules))
	for i, r := range rules {
		out[i] = ruleJSON{ID: r.ID, Family: r.Family, Default: string(r.Default), Doc: r.Doc, Outage: r.Outage, Fix: r.Fix,
			NoVerdict: r.NoVerdict, HelpURI: report.RulesDocURI + "#" + r.ID}
	}
	return map[string]any{"apiVersion": "kubectl-gate.dev/rules/v1", "rules": out}
}

// runVersion prints the version; -o json as {"version": …}.
func runVersion(args []string, s Streams, version string) int {
	fs := pflag.NewFlagSet("kubectl gate version", pflag.ContinueOnError)
	output := fs.StringP("output", "o", "text", "output format: text|json")
	if done, code := parse(fs, args, s, 0); done {
		return code
	}
	switch *output {
	case "text":
		fmt.Fprintln(s.Out, version)
	case "json":
		b, _ := json.Marshal(map[string]string{"version": version, "goVersion": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
		fmt.Fprintln(s.Out, string(b))
	default:
		return fail(s.Err, usageErr("--output", "%q is not text or json%s", *output, suggest(*output, []string{"text", "json"})))
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
		out[i] = report.Rule{ID: r.ID, Default: r.Default, Doc: r.Doc, Outage: r.Outage, Fix: r.Fix, Family: r.Family,
			NoVerdict: r.NoVerdict, MayNoVerdict: r.MayNoVerdict, Unwaivable: r.Unwaivable}
	}
	return out
}
