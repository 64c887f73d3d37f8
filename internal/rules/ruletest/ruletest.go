// Package ruletest is the one table harness for rules: a rule runs on a
// realistic render as the engine runs it (id stamped, configured severity
// applied), and each row says which findings it must make — by field path
// and message fragment, in order — or that it must not fire, and at which
// severity.
//
//	ruletest.Run(t, rollouts.CanaryPause, []ruletest.Case{
//		{Name: "pause after 10%", Input: rollout(pause)},                       // must not fire
//		{Name: "10% then 100%", Input: rollout(jump), Want: []string{"spec.strategy.canary.steps[0]: no pause"}},
//	})
package ruletest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Case is one row of a rule's table.
type Case struct {
	Name string
	// Input is the rendered resources, a YAML stream.
	Input string
	// Config is the gate's configuration; nil means config.Default().
	Config *config.Spec
	// Setup changes the Context before the rule runs: the renders of
	// Applications' sources, registry answers, pinning.
	Setup func(*rules.Context)
	// Want lists the findings the rule must make, in order, each as
	// "field.path: message fragment" (": fragment" for a finding about no
	// field; a path alone matches any message). Empty: it must not fire.
	Want []string
	// Severity is the severity every finding must have; "" means the
	// rule's default.
	Severity finding.Severity
}

// Run runs a rule's table, one subtest per row.
func Run(t *testing.T, r rules.Rule, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Helper()
			got := Check(t, r, c)
			Expect(t, got, c.Want)
			sev := c.Severity
			if sev == "" {
				sev = r.Default
			}
			for _, f := range got {
				if f.Severity != sev {
					t.Errorf("severity %s, want %s: %s", f.Severity, sev, Format(f))
				}
			}
		})
	}
}

// Check runs one rule on a case's input as the engine runs it and returns
// its findings.
func Check(t testing.TB, r rules.Rule, c Case) []finding.Finding {
	t.Helper()
	return CheckResources(r, Parse(t, c.Input), c.Config, c.Setup)
}

// CheckResources runs one rule on parsed resources as the engine runs it.
func CheckResources(r rules.Rule, resources []*yaml.RNode, cfg *config.Spec, setup func(*rules.Context)) []finding.Finding {
	if cfg == nil {
		cfg = config.Default()
	}
	c := &rules.Context{Resources: resources, Config: cfg, Counted: manifest.Count(resources)}
	if setup != nil {
		setup(c)
	}
	return rules.Run(c, []rules.Rule{r})
}

// Expect compares findings with "path: fragment" patterns, in order.
func Expect(t testing.TB, got []finding.Finding, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d findings, want %d:\n%s", len(got), len(want), FormatAll(got))
	}
	for i, w := range want {
		if !Matches(got[i], w) {
			t.Errorf("finding %d = %s\nwant %q", i, Format(got[i]), w)
		}
	}
}

// Matches compares a finding with "path: fragment".
func Matches(f finding.Finding, want string) bool {
	p, frag, _ := strings.Cut(want, ": ")
	path := ""
	if f.Field != nil {
		path = f.Field.Path
	}
	return path == p && strings.Contains(f.Message, frag)
}

// Parse reads a YAML stream, without reader annotations.
func Parse(t testing.TB, stream string) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewBufferString(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("parsing the test input: %v", err)
	}
	return nodes
}

// Format prints a finding on one line for goldens and failures.
func Format(f finding.Finding) string {
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

// FormatAll prints findings one per line, indented.
func FormatAll(fs []finding.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + Format(f) + "\n")
	}
	return b.String()
}
