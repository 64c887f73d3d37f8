package diff

import (
	"fmt"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/report"
)

// MaxComment is GitHub's limit on a pull-request comment, in characters.
const MaxComment = 65536

// Markdown renders the report for a pull-request comment: counts first,
// then one collapsed section per input or app that changed. Each part is
// at most limit characters (runes). With split every section lands in a
// numbered part; without, the one part ends with "… and K more" where it
// was cut.
func (r *Report) Markdown(limit int, split bool) []string {
	head := r.markdownHead()
	var sections []string
	var same []string
	for _, u := range r.Units {
		if u.Empty() {
			same = append(same, u.Input)
			continue
		}
		sections = append(sections, markdownUnit(u))
	}
	if len(same) > 0 {
		again := ""
		if n := r.Counts.NotRenderedAgain; n > 0 {
			again = fmt.Sprintf(" (%d neither rendered again nor checked: nothing they read changed)", n)
		}
		sections = append(sections, fmt.Sprintf("<details><summary>%d unchanged input(s)/app(s)%s</summary>\n\n%s\n\n</details>\n", len(same), again, mdEscape(strings.Join(same, ", "))))
	}
	return pack(head, sections, limit, split)
}

// pack fits sections into parts of at most limit runes. Without split the
// one part holds what fits and then "… and K more"; with split each part
// holds whole sections (one larger than a part is cut, and says so).
func pack(head string, sections []string, limit int, split bool) []string {
	if !split {
		cur := head
		for i, s := range sections {
			need := runes(cur) + runes(s)
			if i < len(sections)-1 {
				need += runes(more(len(sections) - i - 1))
			}
			if need > limit {
				m := more(len(sections) - i)
				return []string{cut(cur, limit-runes(m)) + m}
			}
			cur += s
		}
		return []string{cut(cur, limit)}
	}
	// fit cuts a part that is over the limit on its own (a section, or a
	// head whose pull-request values are long), and says so.
	fit := func(p string) string {
		if runes(p) <= limit {
			return p
		}
		note := "\n… (this section was cut to fit a comment)\n"
		return cut(p, limit-runes(note)) + note
	}
	var parts []string
	cur := head
	for _, s := range sections {
		if runes(cur)+runes(s) <= limit {
			cur += s
			continue
		}
		parts = append(parts, fit(cur))
		cur = fmt.Sprintf("_kubectl gate diff, part %d_\n\n", len(parts)+1) + s
	}
	return append(parts, fit(cur))
}

func more(k int) string { return fmt.Sprintf("\n… and %d more\n", k) }

func runes(s string) int { return len([]rune(s)) }

func cut(s string, n int) string {
	r := []rune(s)
	if n < 0 {
		n = 0
	}
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

func (r *Report) markdownHead() string {
	var b strings.Builder
	verdict := "✅ no new error findings"
	switch {
	case len(r.HeadNoVerdict) > 0:
		verdict = "⛔ no verdict at head"
	case r.Counts.NewErrors > 0:
		verdict = fmt.Sprintf("❌ %d new error finding(s)", r.Counts.NewErrors)
	}
	fmt.Fprintf(&b, "### kubectl gate diff: %s\n\n", verdict)
	c := r.Counts
	fmt.Fprintf(&b, "| findings new | fixed | unchanged | objects added | removed | changed |\n|---|---|---|---|---|---|\n| %d (%d error) | %d | %d | %d | %d | %d |\n\n",
		c.New, c.NewErrors, c.Fixed, c.Unchanged, c.Added, c.Removed, c.Changed)
	fmt.Fprintf(&b, "`%s` → `%s` · %s\n\n", mdCode(r.Base), mdCode(r.Head), mdEscape(r.RendererLine()))
	for _, s := range r.BaseNoVerdict {
		fmt.Fprintf(&b, "> base has no verdict, so every finding counts as new: %s\n\n", mdEscape(s))
	}
	for _, s := range r.HeadNoVerdict {
		fmt.Fprintf(&b, "> **no verdict at head**: %s\n\n", mdEscape(s))
	}
	if note := r.UncheckedNote(); note != "" {
		fmt.Fprintf(&b, "> %s\n\n", mdEscape(note))
	}
	return b.String()
}

func markdownUnit(u UnitChange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary><b>%s</b>: %d object(s) changed, %d new, %d fixed finding(s)</summary>\n\n", mdEscape(u.Input), len(u.Objects), len(u.New), len(u.Fixed))
	if u.Status != "" {
		fmt.Fprintf(&b, "_%s_\n\n", mdEscape(u.Status))
	}
	for _, g := range u.groups() {
		if len(g.findings) == 0 || g.name == "unchanged" {
			continue
		}
		fmt.Fprintf(&b, "**%s**\n\n", g.name)
		for _, f := range g.findings {
			fmt.Fprintf(&b, "- %s\n", mdEscape(report.Describe(f)))
		}
		b.WriteString("\n")
	}
	if len(u.Unchanged) > 0 {
		fmt.Fprintf(&b, "%d unchanged finding(s).\n\n", len(u.Unchanged))
	}
	if len(u.Objects) > 0 {
		b.WriteString("```diff\n")
		for _, o := range u.Objects {
			fmt.Fprintf(&b, "%s %s\n", sign(o.Change), fence(o.Key.String()))
			for _, f := range o.Fields {
				fmt.Fprintf(&b, "%s     %s\n", fieldSign(f), fence(f.Text()))
			}
		}
		b.WriteString("```\n")
	}
	b.WriteString("\n</details>\n\n")
	return b.String()
}

func fieldSign(f FieldChange) string {
	switch {
	case f.Note != "":
		return "!"
	case f.Base == "(none)":
		return "+"
	case f.Head == "(none)":
		return "-"
	}
	return "!"
}

// mdEscape keeps PR-controlled text from becoming markup: HTML is escaped
// and markdown's active characters are backslashed.
func mdEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\\", "\\\\", "`", "\\`", "*", "\\*", "_", "\\_",
		"[", "\\[", "]", "\\]", "|", "\\|", "#", "\\#", "\n", " ").Replace(s)
}

func mdCode(s string) string { return strings.ReplaceAll(s, "`", "'") }

// fence keeps text inside a code block: a line of backticks would close it.
func fence(s string) string { return strings.ReplaceAll(s, "```", "'''") }
