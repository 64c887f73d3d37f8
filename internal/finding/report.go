package finding

import "slices"

// Verdicts of a run.
const (
	VerdictPass      = "pass"
	VerdictFail      = "fail"
	VerdictNoVerdict = "no-verdict"
)

// Report is what a run found.
type Report struct {
	Findings []Finding
	// Resources is the number of objects that count as rendered.
	Resources int
	// Failures are what could not be evaluated at all (a render that
	// failed, an unreadable input): each makes the verdict no-verdict.
	Failures []string
	// Configs says which configuration decided each input's verdict: the
	// caller's (--config or the defaults), an in-tree Gate/Pin and whether
	// it could only tighten, flags (README "Trusted config").
	Configs []Config
	// Fixed counts the baseline's entries no finding of this run matched.
	Fixed int
	// RulesRun lists the ids of the rules that ran (not configured off) on
	// any input, in the registry's order; nil when not recorded.
	RulesRun []string
}

// Count returns the number of findings at a severity that are not
// suppressed (waived or in the baseline).
func (r *Report) Count(sev Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == sev && f.Suppressed == nil {
			n++
		}
	}
	return n
}

// NoVerdict reports whether an error-severity finding means the gate could
// not finish (image-resolve).
func (r *Report) NoVerdict() bool {
	for _, f := range r.Findings {
		if f.NoVerdict && f.Severity == SeverityError && f.Suppressed == nil {
			return true
		}
	}
	return false
}

// Verdict is pass, fail or no-verdict; failOnWarning makes warnings fail.
func (r *Report) Verdict(failOnWarning bool) string {
	switch {
	case r.NoVerdict() || len(r.Failures) > 0:
		return VerdictNoVerdict
	case r.Count(SeverityError) > 0, failOnWarning && r.Count(SeverityWarning) > 0:
		return VerdictFail
	}
	return VerdictPass
}

// Merge appends another report's findings and resources.
func (r *Report) Merge(o *Report) {
	r.Findings = append(r.Findings, o.Findings...)
	r.Resources += o.Resources
	r.Failures = append(r.Failures, o.Failures...)
	r.Configs = append(r.Configs, o.Configs...)
	r.Fixed += o.Fixed
	for _, id := range o.RulesRun {
		if !slices.Contains(r.RulesRun, id) {
			r.RulesRun = append(r.RulesRun, id)
		}
	}
}

// Suppressed returns the number of findings suppressed by kind (exception,
// annotation, baseline); "" counts them all.
func (r *Report) Suppressed(kind string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Suppressed != nil && (kind == "" || f.Suppressed.Kind == kind) {
			n++
		}
	}
	return n
}
