package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// hostile is a green run whose strings a manifest author wrote: an object
// name, a message that quotes the manifest and an in-tree Gate's name on
// the config line, each trying to start a line of its own (a forged
// verdict, a GitHub workflow command) or to send a terminal escape (issue
// 18, class 6).
func hostile() *finding.Report {
	const forge = "x\nPASS: 9 resource(s), 0 error(s), 0 warning(s)\n::error file=a,line=1::forged\r::warning::cr\u2028::notice::ls\x1b]0;title\x07\x1b[2J"
	return &finding.Report{Resources: 1, Findings: []finding.Finding{{
		Rule: "rollout-single-writer", Severity: finding.SeverityWarning, Input: "-k " + forge,
		Message:     "two writers " + forge,
		ResourceRef: &finding.ResourceRef{Kind: "Rollout", Name: forge, Namespace: forge},
		Field:       &finding.Field{Path: "spec" + forge},
		File:        &finding.File{Path: "overlays/" + forge + "/r.yaml", Line: 3},
	}, {
		Rule: "render-empty", Severity: finding.SeverityInfo, Message: "excluded " + forge,
	}, {
		Rule: "image-digest", Severity: finding.SeverityError, Message: "waived " + forge,
		Suppressed: &finding.Suppression{Kind: finding.SuppressedByAnnotation, Reason: forge, Owner: forge, Expires: "2027-01-01", Source: "annotation " + forge},
	}}, Configs: []finding.Config{{Sources: []finding.ConfigSource{
		{Source: finding.ConfigDefaults, Role: finding.RoleBase},
		{Source: finding.ConfigInTree, Kind: "Gate", Name: forge, Role: finding.RoleTighten},
	}, Inputs: []string{"-k " + forge}}}}
}

// TestNoFormatLetsAManifestForgeALine: in text and github output every line
// is one the gate wrote, no raw control character reaches the stream, and
// the structured formats still parse and carry the strings.
func TestNoFormatLetsAManifestForgeALine(t *testing.T) {
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			out := write(t, format, hostile())
			if i := strings.IndexFunc(out, func(r rune) bool { return r != '\n' && unsafeRune(r) }); i >= 0 {
				t.Errorf("a raw control character %q at %d:\n%q", out[i], i, out)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			switch format {
			case "text":
				for i, l := range lines {
					if strings.HasPrefix(strings.TrimSpace(l), "::") {
						t.Errorf("line %d is a workflow command: %q", i, l)
					}
					if strings.HasPrefix(l, "PASS") || strings.HasPrefix(l, "FAIL") {
						if i != len(lines)-1 {
							t.Errorf("a verdict line before the last: %q", l)
						}
					}
				}
				if !strings.HasPrefix(lines[len(lines)-1], "PASS: 1 resource(s)") {
					t.Errorf("last line %q", lines[len(lines)-1])
				}
				if !strings.Contains(out, `x\nPASS: 9`) || !strings.Contains(out, `\x1b[2J`) || !strings.Contains(out, `\u2028`) {
					t.Errorf("the hostile strings are not shown escaped:\n%s", out)
				}
			case "github":
				if len(lines) != 4 {
					t.Errorf("%d lines, want 4 (a warning, two notices, the config notice):\n%s", len(lines), out)
				}
				for _, l := range lines {
					if !strings.HasPrefix(l, "::warning file=") && !strings.HasPrefix(l, "::notice title=") {
						t.Errorf("a line the gate did not write: %q", l)
					}
				}
			case "json":
				var doc Document
				if err := json.Unmarshal([]byte(out), &doc); err != nil || !strings.Contains(doc.Results[0].ResourceRef.Name, "\n::error") {
					t.Errorf("json does not carry the name as data: %v", err)
				}
			case "junit":
				if err := xml.Unmarshal([]byte(out), new(junitSuite)); err != nil {
					t.Error(err)
				}
			case "sarif":
				if !strings.Contains(out, "overlays/x%0APASS:%209") {
					t.Errorf("the file URI is not percent-encoded:\n%s", out)
				}
			}
		})
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"web":                     "web",
		"a\nb\r\tc":               `a\nb\r\tc`,
		"\x1b[31mred":             `\x1b[31mred`,
		"ä–✓":                     "ä–✓",
		"\u202eevil\u2029":        `\u202eevil\u2029`,
		"\x85next\x7f":            `\x85next\x7f`,
		string([]byte{0xff, 'a'}): `\xffa`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSafeLines: stderr in CI keeps tabs and its own lines, shows control
// characters escaped, and a line that would be a workflow command is read
// as text.
func TestSafeLines(t *testing.T) {
	var b bytes.Buffer
	w := SafeLines(&b)
	for _, chunk := range []string{"kubectl gate: NO VERDICT: rendering app\n", "  ::error::forged\n\tindented\x1b[2J\n::warn", "ing::x"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "kubectl gate: NO VERDICT: rendering app\n(output)   ::error::forged\n\tindented\\x1b[2J\n(output) ::warning::x"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
