package render

import (
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
)

// webFrom is the Deployment web as read from a file, with an image.
func webFrom(path, image string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, annotations: {config.kubernetes.io/path: ` + path + `}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "` + image + `"}]}
`
}

var web = webFrom("base/web.yaml", "ghcr.io/shop/web:1.4.2")

func TestDuplicate(t *testing.T) {
	other := webFrom("extra/web.yaml", "ghcr.io/shop/web:latest")
	copyOf := webFrom("copy/web.yaml", "ghcr.io/shop/web:1.4.2")
	ruletest.Run(t, Duplicate, []ruletest.Case{
		{Name: "one copy", Input: web},
		{Name: "a different second copy", Input: web + "---\n" + other, Want: []string{": the render already holds this object (from base/web.yaml); a different copy"}},
		{Name: "an identical copy from another file", Input: web + "---\n" + copyOf, Want: []string{": an identical copy"}},
		{Name: "another namespace", Input: web + "---\n" + `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: staging}
`},
		{Name: "another group, same kind and name", Input: web + "---\n" + `apiVersion: example.com/v1
kind: Deployment
metadata: {name: web, namespace: shop}
`},
		{Name: "a cluster-scoped object in two namespaces", Input: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader, namespace: default}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader, namespace: kube-system}\n",
			Want: []string{": the render already holds this object"}},
		{Name: "generateName only", Input: "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: migrate-}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {generateName: migrate-}\n"},
		{Name: "local config", Input: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, annotations: {config.kubernetes.io/local-config: \"true\"}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, annotations: {config.kubernetes.io/local-config: \"true\"}}\n"},
	})
	ruletest.Mutants(t, Duplicate, ruletest.Case{Input: web})
}
