package diff

import (
	"html/template"
	"io"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
)

// WriteHTML writes the report as one self-contained page: inline style, no
// script, no external resource, and a Content-Security-Policy that forbids
// every request, so a value from a pull request cannot make the reader's
// browser fetch anything. Findings sit beside the object they are about.
func (r *Report) WriteHTML(w io.Writer) error {
	return page.Execute(w, r)
}

// objectFindings pairs each changed object with the findings about it, and
// lists the unit's other findings apart.
type objectRow struct {
	Object   ObjectChange
	Findings []taggedFinding
}

type taggedFinding struct {
	Tag  string
	Line string
}

type unitView struct {
	Unit  UnitChange
	Rows  []objectRow
	Other []taggedFinding
}

func (u UnitChange) view() unitView {
	v := unitView{Unit: u}
	byKey := map[string]int{}
	for _, o := range u.Objects {
		byKey[o.Key.Kind+"/"+o.Key.Namespace+"/"+o.Key.Name] = len(v.Rows)
		v.Rows = append(v.Rows, objectRow{Object: o})
	}
	for _, g := range u.groups() {
		for _, f := range g.findings {
			t := taggedFinding{Tag: g.name, Line: report.Describe(f)}
			if i, ok := byKey[refKey(f.ResourceRef)]; ok {
				v.Rows[i].Findings = append(v.Rows[i].Findings, t)
				continue
			}
			v.Other = append(v.Other, t)
		}
	}
	return v
}

func refKey(r *finding.ResourceRef) string {
	if r == nil {
		return ""
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

var page = template.Must(template.New("diff").Funcs(template.FuncMap{"sign": sign}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'; base-uri 'none'">
<meta name="referrer" content="no-referrer">
<title>kubectl gate diff: {{.Base}} → {{.Head}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.3em} table{border-collapse:collapse;width:100%;margin:.5em 0}
td,th{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}
code,pre{font:12px/1.4 ui-monospace,monospace;white-space:pre-wrap;word-break:break-all;margin:0}
.NEW{color:#b00020;font-weight:bold}.FIXED{color:#1b7f2a}.unchanged{color:#777}
.added{background:#e8f7ea}.removed{background:#fdecea}.nv{background:#fff3cd;padding:.5em}
</style></head><body>
<h1>kubectl gate diff: <code>{{.Base}}</code> → <code>{{.Head}}</code></h1>
<p id="counts">{{.Headline}}</p>
<p>{{.RendererLine}}</p>
{{range .BaseNoVerdict}}<p class="nv">base has no verdict, so every finding counts as new: {{.}}</p>{{end}}
{{range .HeadNoVerdict}}<p class="nv"><b>no verdict at head</b>: {{.}}</p>{{end}}
{{with .UncheckedNote}}<p id="unchecked">{{.}}</p>{{end}}
{{range .Units}}{{if not .Empty}}{{with .View}}
<section class="unit"><h2>{{.Unit.Input}}</h2>
{{if .Unit.Status}}<p><i>{{.Unit.Status}}</i></p>{{end}}
{{if .Rows}}<table><tr><th>object</th><th>fields</th><th>findings</th></tr>
{{range .Rows}}<tr class="{{.Object.Change}}"><td><code>{{sign .Object.Change}} {{.Object.Key}}</code></td>
<td><pre>{{range .Object.Fields}}{{.Text}}
{{end}}</pre></td>
<td>{{range .Findings}}<div class="finding {{.Tag}}">{{.Tag}} {{.Line}}</div>{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .Other}}<ul class="findings">{{range .Other}}<li class="finding {{.Tag}}">{{.Tag}} {{.Line}}</li>{{end}}</ul>{{end}}
</section>{{end}}{{end}}{{end}}
<footer><p>{{.UnchangedLine}}</p></footer>
</body></html>
`))

// View is the unit as the HTML page shows it.
func (u UnitChange) View() unitView { return u.view() }

// UnchangedLine names the inputs and apps nothing changed in.
func (r *Report) UnchangedLine() string {
	var same []string
	for _, u := range r.Units {
		if u.Empty() {
			same = append(same, u.Input)
		}
	}
	if len(same) == 0 {
		return ""
	}
	s := "unchanged: "
	for i, x := range same {
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}
