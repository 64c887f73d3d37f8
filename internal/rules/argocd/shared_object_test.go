package argocd_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

// ownerApp is an Application deploying path to namespace ns of server.
func ownerApp(t *testing.T, name, path, server, ns string) *yaml.RNode {
	return ruletest.Parse(t, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: `+name+`, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://github.com/example/platform.git, path: `+path+`}
  destination: {server: `+server+`, namespace: `+ns+`}
`)[0]
}

const sharedConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared-settings}\ndata: {level: LEVEL}\n"

func TestSharedObject(t *testing.T) {
	render := func(t *testing.T, level string, ns string) []*yaml.RNode {
		doc := strings.ReplaceAll(sharedConfigMap, "LEVEL", level)
		if ns != "" {
			doc = strings.Replace(doc, "{name: shared-settings}", "{name: shared-settings, namespace: "+ns+"}", 1)
		}
		return ruletest.Parse(t, doc+"---\napiVersion: v1\nkind: Service\nmetadata: {name: svc-"+level+"}\nspec: {ports: [{port: 80}]}\n")
	}
	const local = "https://kubernetes.default.svc"
	cases := []struct {
		name string
		apps func(t *testing.T) []argo.AppSource
		want []finding.Severity
	}{
		{"two apps, one cluster, one namespace, different content", func(t *testing.T) []argo.AppSource {
			return []argo.AppSource{
				{App: ownerApp(t, "team-a", "teams/a", local, "shared"), Index: -1, Path: "teams/a", Resources: render(t, "debug", "")},
				{App: ownerApp(t, "team-b", "teams/b", local, "shared"), Index: -1, Path: "teams/b", Resources: render(t, "info", "")},
			}
		}, []finding.Severity{finding.SeverityError}},
		{"the destination namespace applied to one, written in the other", func(t *testing.T) []argo.AppSource {
			return []argo.AppSource{
				{App: ownerApp(t, "team-a", "teams/a", local, "shared"), Index: -1, Path: "teams/a", Resources: render(t, "debug", "")},
				{App: ownerApp(t, "team-b", "teams/b", local, "other"), Index: -1, Path: "teams/b", Resources: render(t, "info", "shared")},
			}
		}, []finding.Severity{finding.SeverityError}},
		{"identical content is a warning", func(t *testing.T) []argo.AppSource {
			return []argo.AppSource{
				{App: ownerApp(t, "team-a", "teams/a", local, "shared"), Index: -1, Path: "teams/a", Resources: render(t, "info", "")},
				{App: ownerApp(t, "team-b", "teams/b", "in-cluster", "shared"), Index: -1, Path: "teams/b", Resources: render(t, "info", "")},
			}
		}, []finding.Severity{finding.SeverityWarning, finding.SeverityWarning}}, // the ConfigMap and the Service
		{"other namespaces", func(t *testing.T) []argo.AppSource {
			return []argo.AppSource{
				{App: ownerApp(t, "team-a", "teams/a", local, "a"), Index: -1, Path: "teams/a", Resources: render(t, "debug", "")},
				{App: ownerApp(t, "team-b", "teams/b", local, "b"), Index: -1, Path: "teams/b", Resources: render(t, "info", "")},
			}
		}, nil},
		{"other clusters", func(t *testing.T) []argo.AppSource {
			return []argo.AppSource{
				{App: ownerApp(t, "prod-eu", "envs/prod", "https://eu.example.com", "shop"), Index: -1, Path: "envs/prod", Resources: render(t, "debug", "")},
				{App: ownerApp(t, "prod-us", "envs/prod", "https://us.example.com", "shop"), Index: -1, Path: "envs/prod", Resources: render(t, "info", "")},
			}
		}, nil},
		{"one app, not rendered: nothing to compare", func(t *testing.T) []argo.AppSource {
			return []argo.AppSource{
				{App: ownerApp(t, "team-a", "teams/a", local, "shared"), Index: -1, Path: "teams/a", Resources: render(t, "debug", "")},
				{App: ownerApp(t, "team-b", "teams/b", local, "shared"), Index: -1, Skipped: "Helm chart"},
			}
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			apps := c.apps(t)
			got := check(t, "app-shared-object", []*yaml.RNode{apps[0].App, apps[1].App}, apps, nil)
			if len(got) != len(c.want) {
				t.Fatalf("%d findings, want %d:\n%s", len(got), len(c.want), messages(got))
			}
			for i, f := range got {
				if f.Severity != c.want[i] || f.ResourceRef.Name != "team-b" ||
					!strings.Contains(f.Message, "(ns shared)") || i == 0 && !strings.Contains(f.Message, "ConfigMap/shared-settings") ||
					!strings.Contains(f.Message, "Application argocd/team-a (spec.source teams/a)") || !strings.Contains(f.Message, "Application argocd/team-b (spec.source teams/b)") {
					t.Errorf("finding %d: %s %v %s", i, f.Severity, f.ResourceRef, f.Message)
				}
			}
		})
	}
}
