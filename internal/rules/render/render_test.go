package render_test

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/render"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

// runRuleOn runs one rule on a YAML stream with a config, as the engine does.
func runRuleOn(t *testing.T, id, stream string, cfg *config.Spec, mod func(*rules.Context)) []finding.Finding {
	t.Helper()
	r, ok := all.Lookup(id)
	if !ok {
		t.Fatalf("no rule %s", id)
	}
	return ruletest.Check(t, r, ruletest.Case{Input: stream, Config: cfg, Setup: mod})
}

const digestA = "sha256:4315c8fd5a82533f56a83922bc1d5a2cff2b1f1e76117f66673abbcffd6c9fff"

func deployment(images ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: prod}\nspec:\n  template:\n    spec:\n      containers:\n")
	for i, img := range images {
		b.WriteString("      - {name: c" + string(rune('0'+i)) + ", image: \"" + img + "\"}\n")
	}
	return b.String()
}

func TestRenderEmptyAndCount(t *testing.T) {
	local := "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\n"
	if got := runRuleOn(t, "render-empty", local, nil, nil); len(got) != 1 {
		t.Errorf("a render holding only the gate's config must be empty: %+v", got)
	}
	if got := runRuleOn(t, "render-empty", deployment("a@"+digestA), nil, nil); len(got) != 0 {
		t.Errorf("one object fired render-empty: %+v", got)
	}
	cfg := config.Default()
	three := 3
	cfg.Render.MinResources = &three
	if got := runRuleOn(t, "render-empty", deployment("a@"+digestA), cfg, nil); len(got) != 1 {
		t.Errorf("minResources 3 with one object: %+v", got)
	}
	one := 1
	cfg.Render.ExpectResources = &one
	if got := runRuleOn(t, "render-count", deployment("a@"+digestA), cfg, nil); len(got) != 0 {
		t.Errorf("count 1 == 1 fired: %+v", got)
	}
	if got := runRuleOn(t, "render-count", deployment("a@"+digestA)+"---\n"+local+"---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n", cfg, nil); len(got) != 1 {
		t.Errorf("count 2 != 1 did not fire: %+v", got)
	}
}

// TestRenderMutants: each render rule's selftest mutants turn a passing
// render red.
func TestRenderMutants(t *testing.T) {
	ruletest.Mutants(t, render.Empty, ruletest.Case{Input: deployment("a@" + digestA)})
	one := 1
	cfg := config.Default()
	cfg.Render.ExpectResources = &one
	ruletest.Mutants(t, render.Count, ruletest.Case{Input: deployment("a@" + digestA), Config: cfg})
}
