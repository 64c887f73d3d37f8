package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// This file renders suppressed findings (waived by an exception or an
// annotation, or existing in the baseline) in every format: they are
// reported, marked, and never counted at their severity.

// Describe is Line for a finding that counts, and for a suppressed one the
// line marked with who waived it, why and until when (the KRM function's
// stderr, text output).
func Describe(f finding.Finding) string {
	s := f.Suppressed
	if s == nil {
		return Line(f)
	}
	return fmt.Sprintf("%s %s", Line(f), Escape(Justification(s)))
}

// Justification says in one parenthesis why a finding is suppressed.
func Justification(s *finding.Suppression) string {
	if s.Kind == finding.SuppressedByBaseline {
		return "(existing: in " + s.Source + ")"
	}
	return fmt.Sprintf("(waived by %s; owner %s; expires %s; reason: %s)", s.Source, s.Owner, s.Expires, s.Reason)
}

// counted returns the findings that count (not suppressed): fs itself when
// none is suppressed (callers only read it).
func counted(fs []finding.Finding) []finding.Finding {
	i := 0
	for i < len(fs) && fs[i].Suppressed == nil {
		i++
	}
	if i == len(fs) {
		return fs
	}
	out := make([]finding.Finding, 0, len(fs))
	for _, f := range fs {
		if f.Suppressed == nil {
			out = append(out, f)
		}
	}
	return out
}

// writeSuppressedText lists waived findings under a "waived" heading and
// baseline ones under "existing (baseline)", one line each.
func writeSuppressedText(w io.Writer, doc Document) error {
	for _, group := range []struct {
		heading  string
		baseline bool
	}{{"waived:", false}, {"existing (baseline):", true}} {
		first := true
		for _, f := range doc.Results {
			if f.Suppressed == nil || (f.Suppressed.Kind == finding.SuppressedByBaseline) != group.baseline {
				continue
			}
			if first {
				if _, err := fmt.Fprintln(w, group.heading); err != nil {
					return err
				}
				first = false
			}
			if _, err := fmt.Fprintln(w, "  "+Describe(f)); err != nil {
				return err
			}
		}
	}
	return nil
}

// summarySuppressed is the summary line's tail: ", 2 waived, 3 existing, 1 fixed".
func summarySuppressed(s Summary) string {
	var b strings.Builder
	if s.Waived > 0 {
		fmt.Fprintf(&b, ", %d waived", s.Waived)
	}
	if s.Existing > 0 {
		fmt.Fprintf(&b, ", %d existing (baseline)", s.Existing)
	}
	if s.Fixed > 0 {
		fmt.Fprintf(&b, ", %d fixed (in the baseline, no longer found)", s.Fixed)
	}
	return b.String()
}

// sarifSuppressions is a SARIF result's suppressions: an annotation waiver
// is inSource, an exception of the config or the baseline external; the
// justification carries the reason, owner and expiry.
func sarifSuppressions(f finding.Finding) []any {
	s := f.Suppressed
	kind := "external"
	if s.Kind == finding.SuppressedByAnnotation {
		kind = "inSource"
	}
	just := strings.TrimPrefix(strings.TrimSuffix(Justification(s), ")"), "(")
	props := map[string]string{"source": s.Source, "kind": s.Kind}
	if s.Owner != "" {
		props["owner"] = s.Owner
	}
	if s.Expires != "" {
		props["expires"] = s.Expires
	}
	return []any{map[string]any{"kind": kind, "status": "accepted", "justification": just, "properties": props}}
}

// junitSkipped is a suppressed finding's JUnit test case: skipped, with the
// justification as its message.
func junitSkipped(f finding.Finding) junitCase {
	name := strings.TrimSpace(f.Rule + " " + f.ResourceRef.String())
	return junitCase{Name: name + " (suppressed)", Classname: f.Rule,
		Skipped: &junitSkip{Message: Describe(f)}}
}

type junitSkip struct {
	Message string `xml:"message,attr"`
}

// githubSuppressed is a suppressed finding as a GitHub notice, never an
// error or warning annotation.
func githubSuppressed(w io.Writer, f finding.Finding) error {
	_, err := fmt.Fprintf(w, "::notice title=%s (suppressed)::%s\n", githubProperty(Escape(f.Rule)), GitHubData(Describe(f)))
	return err
}
