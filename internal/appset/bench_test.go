package appset

import (
	"fmt"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// BenchmarkExpand100 expands a git directories generator over 100 app
// directories (goTemplate), the expansion alone, without rendering sources.
func BenchmarkExpand100(b *testing.B) {
	files := map[string]string{}
	for i := 0; i < 100; i++ {
		files[fmt.Sprintf("apps/app-%03d/kustomization.yaml", i)] = "resources: []\n"
	}
	root := testutil.WriteFiles(b, b.TempDir(), files)
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: bench, namespace: argocd}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - git: {repoURL: https://github.com/example/gitops.git, directories: [{path: "apps/*"}]}
  template:
    metadata: {name: '{{.path.basename}}', labels: {team: '{{ .path.basename | upper }}'}}
    spec:
      project: default
      source: {repoURL: https://github.com/example/gitops.git, targetRevision: HEAD, path: '{{.path.path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{.path.basename}}'}
`
	n := parse(&testing.T{}, set)
	b.ReportAllocs()
	for b.Loop() {
		out, err := Expand(n, Options{Root: root})
		if err != nil || len(out) != 100 {
			b.Fatalf("%d apps, %v", len(out), err)
		}
	}
}
