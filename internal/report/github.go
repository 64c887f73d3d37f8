package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

func writeGitHub(w io.Writer, doc Document) error {
	if err := writeGitHubFindings(w, doc); err != nil {
		return err
	}
	for _, c := range doc.Config {
		msg := GitHubData(c.line(len(doc.Config), -1))
		if _, err := fmt.Fprintf(w, "::notice title=kubectl-gate config::%s\n", msg); err != nil {
			return err
		}
	}
	// A CI that reads annotations, not the exit code, must not see green:
	// every cause of a no-verdict is an error annotation of its own.
	if doc.Summary.Verdict != finding.VerdictNoVerdict {
		return nil
	}
	for _, c := range noVerdictCauses(doc) {
		msg := GitHubData("NO VERDICT: " + c)
		if _, err := fmt.Fprintf(w, "::error title=kubectl-gate no verdict::%s\n", msg); err != nil {
			return err
		}
	}
	return nil
}

// noVerdictCauses lists why a run has no verdict: what could not be
// evaluated, then the findings that mean the gate could not finish.
func noVerdictCauses(doc Document) []string {
	out := make([]string, 0, len(doc.Failures))
	for _, f := range doc.Failures {
		out = append(out, Escape(f))
	}
	for _, f := range doc.Results {
		if f.NoVerdict && f.Severity == finding.SeverityError {
			out = append(out, Line(f))
		}
	}
	if len(out) == 0 {
		out = append(out, "the gate could not finish")
	}
	return out
}

func writeGitHubFindings(w io.Writer, doc Document) error {
	for _, f := range doc.Results {
		if f.Suppressed != nil {
			if err := githubSuppressed(w, f); err != nil {
				return err
			}
			continue
		}
		cmd := "error"
		switch f.Severity {
		case finding.SeverityWarning:
			cmd = "warning"
		case finding.SeverityInfo:
			cmd = "notice" // an exclusion the caller decided: listed, not a problem
		}
		var props []string
		if f.File != nil && f.File.Path != "" {
			props = append(props, "file="+githubProperty(Escape(f.File.Path)))
			if f.File.Line > 0 {
				props = append(props, "line="+strconv.Itoa(f.File.Line))
			}
		}
		props = append(props, "title="+githubProperty(Escape(f.Rule)))
		msg := GitHubData(Line(f))
		if _, err := fmt.Fprintf(w, "::%s %s::%s\n", cmd, strings.Join(props, ","), msg); err != nil {
			return err
		}
	}
	return nil
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
