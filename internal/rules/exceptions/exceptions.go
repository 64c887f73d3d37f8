// Package exceptions registers the rules that audit waivers: exceptions of
// the trusted config (spec.exceptions) and waiver annotations. They are
// judged by internal/waiver when findings are waived, not by a Check: they
// are registered here with a nil Check so the configuration, output and
// docs know their ids. None of them can itself be waived.
package exceptions

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Expired fires on an exception or waiver annotation past its expires date.
var Expired = rules.Rule{
	ID: "exception-expired", Default: finding.SeverityError, Family: "exceptions", Unwaivable: true,
	Doc:    "an exception (spec.exceptions) or kubectl-gate.dev/waive annotation is past its expires date: it waives nothing, and names its owner",
	Outage: "a waiver granted for a week that silently became permanent",
	Fix:    "fix the finding it waived and remove the entry, or renew it with a new expires date, owner and reason in the same review",
}

// Unused fires on an exception or waiver annotation that waived nothing.
var Unused = rules.Rule{
	ID: "exception-unused", Default: finding.SeverityWarning, Family: "exceptions", Unwaivable: true,
	Doc:    "an exception or waiver annotation waived no finding in this run: the problem was fixed or its match is wrong",
	Outage: "a stale waiver left in place that will hide the next violation on that object",
	Fix:    "remove the entry, or correct its match (rule, kind, namespace, name) to the finding it is meant to waive",
}

// Ignored fires where a waiver was seen but does not count.
var Ignored = rules.Rule{
	ID: "exception-ignored", Default: finding.SeverityWarning, Family: "exceptions", Unwaivable: true,
	Doc:    "a waiver that does not count: exceptions in an in-tree Gate, a waiver annotation without spec.exceptionsFromAnnotations, or an exception of a rule that is not waivable",
	Outage: "a pull request that exempts its own workload, believing it did",
	Fix:    "move the exception into the trusted --config (or set spec.exceptionsFromAnnotations there); a rule that is not waivable must be fixed, not waived",
}

// Invalid fires on a waiver annotation that lacks a required field.
var Invalid = rules.Rule{
	ID: "exception-invalid", Default: finding.SeverityError, Family: "exceptions", Unwaivable: true,
	Doc:    "a kubectl-gate.dev/waive annotation that is malformed or lacks rules, expires, owner or reason: it waives nothing",
	Outage: "an anonymous, permanent waiver",
	Fix:    "give the annotation rules=, expires=, owner= and reason= (see the README's Waivers section)",
}
