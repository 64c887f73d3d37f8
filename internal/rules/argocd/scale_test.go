package argocd

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// appsInput builds n Applications, each with a rendered source of one
// ConfigMap, as --apps-root would.
func appsInput(t testing.TB, n int) ([]*yaml.RNode, []argo.AppSource) {
	t.Helper()
	var res []*yaml.RNode
	var apps []argo.AppSource
	for i := range n {
		app := yaml.MustParse(fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: app%d, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://github.com/x/y, path: apps/app%d, targetRevision: HEAD}
  destination: {server: https://kubernetes.default.svc, namespace: ns%d}
`, i, i, i))
		cm := yaml.MustParse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: ns%d}\n", i, i))
		res = append(res, app)
		apps = append(apps, argo.AppSource{App: app, Index: -1, Path: fmt.Sprintf("apps/app%d", i), Resources: []*yaml.RNode{cm}})
	}
	return res, apps
}

func runArgoRules(res []*yaml.RNode, apps []argo.AppSource) time.Duration {
	runtime.GC() // a collection inside a run of a few milliseconds would dominate it
	start := time.Now()
	c := &rules.Context{Resources: res, Config: config.Default(), Apps: apps}
	rules.Run(c, []rules.Rule{DestinationNamespace, IgnoreDifferences, SourceEmpty, SourceNotRendered})
	return time.Since(start)
}

// The Argo CD rules are linear in the number of Applications: four times
// the Applications must cost far less than sixteen times the time, which a
// per-Application scan of every render (the old RendersOf loop) cost.
func TestArgoRulesScaleLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	small, smallApps := appsInput(t, 500)
	big, bigApps := appsInput(t, 2000)
	s := time.Duration(1<<63 - 1)
	for range 3 {
		s = min(s, runArgoRules(small, smallApps))
	}
	b := time.Duration(1<<63 - 1)
	for range 3 {
		if b = min(b, runArgoRules(big, bigApps)); b < 6*s {
			break // linear enough; a quadratic path stays above ×8
		}
	}
	// Small runs are milliseconds and noisy on a shared machine; the
	// quadratic path took minutes here.
	if ratio := float64(b) / float64(s); ratio > 8 && b > 500*time.Millisecond {
		t.Errorf("500 Applications: %v, 2000: %v (×%.1f); linear is ×4, quadratic ×16", s, b, ratio)
	}
}

func BenchmarkArgoRules(b *testing.B) {
	for _, n := range []int{1000, 4000, 20000} {
		res, apps := appsInput(b, n)
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			for b.Loop() {
				runArgoRules(res, apps)
			}
		})
	}
}
