package helm

import (
	"strings"
	"testing"
)

func TestSplitManifest(t *testing.T) {
	text := "---\n# Source: web/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n" +
		"---\n# Source: web/templates/empty.yaml\n" +
		"---\n# Source: web/templates/b.yaml\n# a comment\nkind: Secret\n---   \n# Source: web/charts/db/templates/c.yaml\nkind: Service\n"
	got := SplitManifest(text)
	want := []Document{
		{Source: "web/templates/a.yaml", Body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a"},
		{Source: "web/templates/empty.yaml", Body: ""},
		{Source: "web/templates/b.yaml", Body: "# a comment\nkind: Secret"},
		{Source: "web/charts/db/templates/c.yaml", Body: "kind: Service"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d documents %q, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("document %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestSourcePath(t *testing.T) {
	for _, tt := range []struct{ dir, src, want string }{
		{"charts/web", "web/templates/x.yaml", "charts/web/templates/x.yaml"},
		{"charts/web/", "web/charts/db/templates/x.yaml", "charts/web/charts/db/templates/x.yaml"},
		{"", "web/templates/x.yaml", "templates/x.yaml"},
		{".", "web/crds/c.yaml", "crds/c.yaml"},
	} {
		if got := SourcePath(tt.dir, tt.src); got != tt.want {
			t.Errorf("SourcePath(%q, %q) = %q, want %q", tt.dir, tt.src, got, tt.want)
		}
	}
}

func TestParseRejectsNonObjects(t *testing.T) {
	for _, body := range []string{"- a\n- b", "just a string", "a: [unclosed"} {
		if _, err := Parse([]Document{{Source: "web/templates/x.yaml", Body: body}}, "c"); err == nil || !strings.Contains(err.Error(), "web/templates/x.yaml") {
			t.Errorf("Parse(%q) error = %v, want one naming the template", body, err)
		}
	}
}

// FuzzSplitParse feeds arbitrary rendered text (a chart's templates are
// untrusted input) through the splitter and the parser: no panic, every
// document printed and split again is the same document.
func FuzzSplitParse(f *testing.F) {
	for _, s := range []string{
		"---\n# Source: web/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"---\n# Source: x\n---\n---\n# Source: y\n# Source: z\nk: v\n",
		"kind: Pod\n---\n# Source: a/b\n- list\n",
		"\n\n---\r\n# Source: \n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		docs := SplitManifest(text)
		_, _ = Parse(docs, "charts/c")
		var b strings.Builder
		if err := Print(&b, docs); err != nil {
			t.Fatal(err)
		}
		again := SplitManifest(b.String())
		if len(again) != len(docs) {
			t.Fatalf("print+split changed %d documents into %d:\n%q\n%q", len(docs), len(again), docs, again)
		}
		for i := range docs {
			if again[i] != docs[i] {
				t.Fatalf("print+split changed document %d: %q → %q", i, docs[i], again[i])
			}
		}
	})
}
