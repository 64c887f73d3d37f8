package render_test

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/render"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

const (
	web = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec:
  template:
    spec:
      containers: [{name: web, image: "ghcr.io/shop/web@sha256:4315c8fd5a82533f56a83922bc1d5a2cff2b1f1e76117f66673abbcffd6c9fff"}]
`
	gateConfig = "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\n"
	service    = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"
)

func expect(n int) *config.Spec {
	cfg := config.Default()
	cfg.Render.ExpectResources = &n
	return cfg
}

func TestRenderEmpty(t *testing.T) {
	three := config.Default()
	min := 3
	three.Render.MinResources = &min
	ruletest.Run(t, render.Empty, []ruletest.Case{
		{Name: "only the gate's own config", Input: gateConfig, Want: []string{": the render holds 0 object(s), fewer than the 1 required"}},
		{Name: "one object", Input: web},
		{Name: "minResources 3, one object", Input: web, Config: three, Want: []string{": fewer than the 3 required"}},
		{Name: "minResources 3, three objects", Input: web + "---\n" + service + "---\n" + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", Config: three},
	})
}

func TestRenderCount(t *testing.T) {
	ruletest.Run(t, render.Count, []ruletest.Case{
		{Name: "not set", Input: web},
		{Name: "1 == 1", Input: web, Config: expect(1)},
		{Name: "local config does not count", Input: web + "---\n" + gateConfig, Config: expect(1)},
		{Name: "2 != 1", Input: web + "---\n" + gateConfig + "---\n" + service, Config: expect(1), Want: []string{": the render holds 2 object(s), expected 1"}},
	})
}

// TestRenderMutants: each render rule's selftest mutants turn a passing
// render red.
func TestRenderMutants(t *testing.T) {
	ruletest.Mutants(t, render.Empty, ruletest.Case{Input: web})
	ruletest.Mutants(t, render.Count, ruletest.Case{Input: web, Config: expect(1)})
}
