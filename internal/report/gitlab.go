package report

import (
	"io"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// gitlabIssue is one entry of GitLab's code quality report (a subset of
// the Code Climate issue format GitLab reads: description, check_name,
// fingerprint, severity, location.path and location.lines.begin).
type gitlabIssue struct {
	Description string         `json:"description"`
	CheckName   string         `json:"check_name"`
	Fingerprint string         `json:"fingerprint"`
	Severity    string         `json:"severity"`
	Location    gitlabLocation `json:"location"`
}

type gitlabLocation struct {
	Path  string      `json:"path"`
	Lines gitlabLines `json:"lines"`
}

type gitlabLines struct {
	Begin int `json:"begin"`
}

// writeGitLab writes GitLab's code quality report: every finding that
// counts, placed as in SARIF, and each cause of a no-verdict run as a
// blocker, so a merge request widget never shows a clean run that was not
// judged. Suppressed findings are left out, as GitLab has no such state.
func writeGitLab(w io.Writer, doc Document, o Options) error {
	issues := []gitlabIssue{}
	for _, f := range counted(doc.Results) {
		loc := location(f, o).PhysicalLocation
		path := loc.ArtifactLocation.URI
		if f.File != nil && f.File.Path != "" {
			path = f.File.Path
		} else if f.InputFile != "" {
			path = f.InputFile
		}
		issues = append(issues, gitlabIssue{Description: Line(f), CheckName: f.Rule, Fingerprint: Fingerprint(f),
			Severity: gitlabSeverity(f), Location: gitlabLocation{Path: path, Lines: gitlabLines{Begin: loc.Region.StartLine}}})
	}
	if doc.Summary.Verdict == finding.VerdictNoVerdict {
		for _, c := range noVerdictCauses(doc) {
			f := finding.Finding{Rule: "no-verdict", Message: c}
			issues = append(issues, gitlabIssue{Description: "NO VERDICT: " + c, CheckName: "no-verdict", Fingerprint: Fingerprint(f),
				Severity: "blocker", Location: gitlabLocation{Path: location(f, o).PhysicalLocation.ArtifactLocation.URI, Lines: gitlabLines{Begin: 1}}})
		}
	}
	return writeIndented(w, issues)
}

func gitlabSeverity(f finding.Finding) string {
	switch {
	case f.NoVerdict && f.Severity == finding.SeverityError:
		return "blocker"
	case f.Severity == finding.SeverityError:
		return "critical"
	case f.Severity == finding.SeverityWarning:
		return "minor"
	}
	return "info"
}
