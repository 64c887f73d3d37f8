package rules_test

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// rolloutFindings runs every rule of the rollouts family on a render.
func rolloutFindings(res []*yaml.RNode) []rules.Finding {
	c := &rules.Context{Resources: res, Config: config.Default(), Counted: len(res)}
	var out []rules.Finding
	for _, r := range rules.All() {
		if r.Family == "rollouts" {
			for _, f := range r.Check(c) {
				f.Rule = r.ID
				out = append(out, f)
			}
		}
	}
	return out
}

// formatFinding prints a finding on one line for goldens and failures.
func formatFinding(f rules.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", f.Rule, f.Severity)
	if f.ResourceRef != nil {
		fmt.Fprintf(&b, " %s/%s", f.ResourceRef.Kind, f.ResourceRef.Name)
	}
	if f.Field != nil {
		fmt.Fprintf(&b, " %s", f.Field.Path)
	}
	fmt.Fprintf(&b, ": %s", f.Message)
	return b.String()
}

// checkRule runs one rule on a YAML stream and returns its findings.
func checkRule(t *testing.T, id, stream string) []rules.Finding {
	t.Helper()
	res, err := render.Parse([]byte(stream), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, ok := rules.Lookup(id)
	if !ok {
		t.Fatalf("no rule %s", id)
	}
	return r.Check(&rules.Context{Resources: res, Config: config.Default(), Counted: len(res)})
}

// ruleCase is one table row: a render and the findings expected from one
// rule, each as "path: message fragment" (path alone matches any message).
type ruleCase struct {
	name   string
	stream string
	want   []string
}

// runCases runs a rule's table.
func runCases(t *testing.T, id string, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := checkRule(t, id, tc.stream)
			if len(got) != len(tc.want) {
				t.Fatalf("%d findings, want %d:\n%s", len(got), len(tc.want), formatAll(got))
			}
			for i, w := range tc.want {
				if !matches(got[i], w) {
					t.Errorf("finding %d = %s\nwant %q", i, formatFinding(got[i]), w)
				}
			}
		})
	}
}

// matches compares a finding with "path: fragment".
func matches(f rules.Finding, want string) bool {
	p, frag, _ := strings.Cut(want, ": ")
	path := ""
	if f.Field != nil {
		path = f.Field.Path
	}
	return path == p && strings.Contains(f.Message, frag)
}

func formatAll(fs []rules.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + formatFinding(f) + "\n")
	}
	return b.String()
}
