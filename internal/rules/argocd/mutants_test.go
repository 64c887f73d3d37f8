package argocd

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

const shopApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  source: {repoURL: https://github.com/example/shop.git, path: overlays/prod}
  destination: {namespace: shop-prod}
  ignoreDifferences:
    - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}
`

const argocdCM = `
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers: [/spec/replicas]
`

func TestWidenIgnoreDifferences(t *testing.T) {
	cases := []struct {
		name, input string
		applies     bool
	}{
		{"an Application's pointer", shopApp, true},
		{"an Application without entries gets one", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec: {}\n", true},
		{"argocd-cm", argocdCM, true},
		{"nothing of Argo CD", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := ruletest.Parse(t, c.input)
			if got := argo.IgnoreDifferences(in[0], config.Default()); len(got) != 0 {
				t.Fatalf("the baseline fires: %v", got)
			}
			out, ok := widenIgnoreDifferences(in, config.Default())
			if ok != c.applies {
				t.Fatalf("applies = %v, want %v", ok, c.applies)
			}
			if ok && len(argo.IgnoreDifferences(out[0], config.Default())) == 0 {
				t.Errorf("the widened entry does not fire:\n%s", out[0].MustString())
			}
		})
	}
}
