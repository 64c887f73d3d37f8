package selftest

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

const shopApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://github.com/example/shop.git, path: overlays/prod}
  destination: {namespace: shop-prod}
  ignoreDifferences:
    - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}
`

// RunApps catches a moved destination and an emptied source on a passing
// baseline, and says n/a where no source was rendered.
func TestRunApps(t *testing.T) {
	render := func(ns string) []*yaml.RNode {
		meta := "{name: web}"
		if ns != "" {
			meta = "{name: web, namespace: " + ns + "}"
		}
		return ruletest.Parse(t, "apiVersion: v1\nkind: Service\nmetadata: "+meta+"\n")
	}
	cases := []struct {
		name string
		apps func(app *yaml.RNode) []argo.AppSource
		want string
	}{
		{"explicit namespace: the destination moves", func(app *yaml.RNode) []argo.AppSource {
			return []argo.AppSource{{App: app, Index: -1, Path: "overlays/prod", Resources: render("shop-prod")}}
		}, "fail"},
		{"objects follow the destination: it is removed", func(app *yaml.RNode) []argo.AppSource {
			return []argo.AppSource{{App: app, Index: -1, Path: "overlays/prod", Resources: render("")}}
		}, "fail"},
		{"no rendered source", func(app *yaml.RNode) []argo.AppSource {
			return []argo.AppSource{{App: app, Index: -1, Skipped: "Helm"}}
		}, "n/a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := ruletest.Parse(t, shopApp)
			cfg := config.Default()
			cfg.ArgoCD.Exclude = []string{"shop"} // the unrendered source is out of scope, listed as info
			opts := gate.Options{Config: cfg, Apps: c.apps(in[0])}
			base, err := gate.Run(context.Background(), copyAll(in), opts, gate.Deps{})
			if err != nil || base.Verdict(false) != finding.VerdictPass {
				t.Fatalf("baseline: %v %+v", err, base)
			}
			all, err := RunApps(context.Background(), in, opts, gate.Deps{}, false)
			if err != nil {
				t.Fatal(err)
			}
			// The Argo CD mutants; others (flux-target-namespace) find no
			// object of theirs here.
			var rows []Row
			for _, r := range all {
				if strings.HasPrefix(r.Rule, "argocd-") {
					rows = append(rows, r)
				} else if r.Got != "n/a" {
					t.Errorf("%s ran on an Argo CD input: %+v", r.Rule, r)
				}
			}
			if len(rows) != 2 {
				t.Fatalf("rows %+v, want destination and source-empty", rows)
			}
			for _, r := range rows {
				if r.Got != c.want {
					t.Errorf("%s: got %s, want %s (fired %v)", r.Rule, r.Got, c.want, r.Fired)
				}
			}
			if in[0].MustString() != ruletest.Parse(t, shopApp)[0].MustString() || opts.Apps[0].Resources == nil && c.want == "fail" {
				t.Error("a mutant changed the baseline")
			}
		})
	}
}
