package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestREADMERuleTable keeps the README's rule table equal to the registry;
// `go test ./plugin -run README -update` rewrites it.
func TestREADMERuleTable(t *testing.T) {
	path := filepath.Join(testutil.Root(t), "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- rules:begin -->\n", "<!-- rules:end -->"
	s := string(data)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %q … %q markers", begin, end)
	}
	want := s[:i+len(begin)] + RuleTable() + s[j:]
	if want == s {
		return
	}
	if *testutil.Update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's rule table is out of date: run go test ./plugin -run README -update")
}

// TestRulesDoc keeps docs/rules.md — the rules document SARIF's helpUri
// points into — equal to the registry; `go test ./plugin -run RulesDoc
// -update` rewrites it.
func TestRulesDoc(t *testing.T) {
	path := filepath.Join(testutil.Root(t), "docs", "rules.md")
	want := report.RulesDocument(reportRules())
	got, err := os.ReadFile(path)
	if string(got) == want {
		return
	}
	if *testutil.Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/rules.md is out of date (%v): run go test ./plugin -run RulesDoc -update", err)
}
