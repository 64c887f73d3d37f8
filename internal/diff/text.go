package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
)

// Formats lists the output formats of diff.
var Formats = []string{"text", "json", "markdown", "html"}

// Headline is the counts line every format starts with.
func (r *Report) Headline() string {
	c := r.Counts
	line := fmt.Sprintf("findings: %d new (%d error(s)), %d fixed, %d unchanged · objects: %d added, %d removed, %d changed · %d input(s)/app(s) unchanged",
		c.New, c.NewErrors, c.Fixed, c.Unchanged, c.Added, c.Removed, c.Changed, c.UnchangedUnits)
	if c.NotRenderedAgain > 0 {
		line += fmt.Sprintf(" (%d neither rendered again nor checked: nothing they read changed)", c.NotRenderedAgain)
	}
	return line
}

// UncheckedNote says, when apps were left out (--apps-root: neither their
// Application nor a file they read changed), what the diff did not judge
// in them, else "". Their findings are the same at both revisions, so
// none is new; but what only a check can say is not said: an exception
// that waived nothing there (exception-unused), a check that could not
// finish there (image-resolve and the other no-verdicts of the checks), a
// render that fails at both revisions, and app-shared-object between them
// and the apps rendered (pipeline.Precheck: an app proved unchanged
// before rendering is rendered at neither revision).
func (r *Report) UncheckedNote() string {
	n := r.Counts.NotRenderedAgain
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d app(s) unchanged: not rendered again or checked, at either revision (neither their Application nor a file they read changed, so their findings are the same at both); exception-unused, the checks' no-verdicts (image-resolve), a render failing at both revisions, and app-shared-object between them and the apps rendered are not judged in them (kubectl gate check judges every app)", n)
}

// RendererLine names the renderers in one line.
func (r *Report) RendererLine() string {
	keys := make([]string, 0, len(r.Renderers))
	for k := range r.Renderers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+" "+r.Renderers[k])
	}
	return "renderers: " + strings.Join(parts, ", ")
}

// WriteJSON writes the report as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "kubectl gate diff: %s → %s\n%s\n%s\n", r.Base, r.Head, r.RendererLine(), r.Headline())
	for _, s := range r.BaseNoVerdict {
		fmt.Fprintf(&b, "base has no verdict, so every finding counts as new: %s\n", s)
	}
	for _, s := range r.HeadNoVerdict {
		fmt.Fprintf(&b, "NO VERDICT at head: %s\n", s)
	}
	if note := r.UncheckedNote(); note != "" {
		fmt.Fprintf(&b, "%s\n", note)
	}
	var same []string
	for _, u := range r.Units {
		if u.Empty() {
			same = append(same, u.Input)
			continue
		}
		fmt.Fprintf(&b, "\n== %s\n", u.Input)
		if u.Status != "" {
			fmt.Fprintf(&b, "  (%s)\n", u.Status)
		}
		for _, o := range u.Objects {
			fmt.Fprintf(&b, "  %s %s\n", sign(o.Change), o.Key)
			for _, f := range o.Fields {
				fmt.Fprintf(&b, "      %s\n", f.Text())
			}
		}
		for _, g := range u.groups() {
			for _, f := range g.findings {
				fmt.Fprintf(&b, "  %-9s %s\n", g.name, report.Describe(f))
			}
		}
	}
	if len(same) > 0 {
		fmt.Fprintf(&b, "\nunchanged: %s\n", strings.Join(same, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Text is a field change on one line.
func (f FieldChange) Text() string {
	if f.Note != "" {
		return f.Path + ": " + f.Note
	}
	return fmt.Sprintf("%s: %q → %q", f.Path, f.Base, f.Head)
}

func sign(change string) string {
	switch change {
	case Added:
		return "+"
	case Removed:
		return "-"
	}
	return "~"
}

type group struct {
	name     string
	findings []finding.Finding
}

// groups are a unit's findings: new, fixed, then unchanged.
func (u UnitChange) groups() []group {
	return []group{{"NEW", u.New}, {"FIXED", u.Fixed}, {"unchanged", u.Unchanged}}
}
