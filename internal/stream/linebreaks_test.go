package stream

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// TestLinesAreTheFiles: a NEL, LINE SEPARATOR or PARAGRAPH SEPARATOR in a
// quoted string is a line break to the YAML reader and not to the file's
// readers (editors, GitHub, grep): every node keeps the line the file
// gives it, in a stream small enough to read in one piece and in one the
// reader cuts in chunks, with "\r\n" line ends too.
func TestLinesAreTheFiles(t *testing.T) {
	const doc = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n  annotations:\n    a: \"x\u2028y\"\n    b: 'x\u2029y\u2029z'\n    c: \"x\u0085y\"\nspec:\n  containers:\n  - name: c\n    image: nginx:latest\n"
	for _, docs := range []int{1, 3, 2000} {
		for _, crlf := range []bool{false, true} {
			var b strings.Builder
			for i := range docs {
				fmt.Fprintf(&b, "---\n"+doc, i)
			}
			data := b.String()
			if crlf {
				data = strings.ReplaceAll(data, "\n", "\r\n")
			}
			objs, err := Parse([]byte(data), "u.yaml")
			if err != nil || len(objs) != docs {
				t.Fatalf("%d documents, crlf %v: parsed %d: %v", docs, crlf, len(objs), err)
			}
			lines := bytes.Split([]byte(data), []byte("\n"))
			for i, o := range objs {
				for path, want := range map[string]string{
					"spec.template":            "spec:", // not there: its parent's
					"":                         "",      // the object's line
					"spec.containers[0].image": "    image: nginx:latest",
					"metadata.annotations.c":   "    c: ",
					"spec":                     "spec:",
					"metadata.annotations[b]":  "    b: ",
					"spec.containers[0].name":  "  - name: c",
				} {
					line := yamlpath.LineOf(o.YNode(), path)
					if line < 1 || line > len(lines) {
						t.Fatalf("document %d, %s: line %d", i, path, line)
					}
					got := strings.TrimRight(string(lines[line-1]), "\r")
					if want == "" {
						want = "apiVersion: v1"
					}
					if !strings.HasPrefix(got, want) {
						t.Errorf("%d documents, crlf %v, document %d, %s: line %d is %q, want %q", docs, crlf, i, path, line, got, want)
					}
				}
			}
		}
	}
}
