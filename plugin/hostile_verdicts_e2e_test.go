package plugin

import (
	"strings"
	"testing"
)

// verdictCases are the hostile rows where a green run would judge less than
// what is deployed: Argo CD directory sources read as the repo-server reads
// them, policy tools that judged nothing, admission objects the API server
// refuses, removed kinds, and what a stopped run leaves behind.
func verdictCases(t *testing.T) []hostileCase {
	t.Helper()
	pinned := strings.Replace(podLatest, "nginx:latest", "nginx@"+pinnedDigest, 1)
	dirApp := func(directory string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop, namespace: argocd}\nspec:\n  project: default\n" +
			"  source: {repoURL: https://example.com/r.git, path: app, directory: " + directory + "}\n" +
			"  destination: {server: https://kubernetes.default.svc, namespace: shop}\n"
	}
	hiddenPod := strings.Replace(podLatest, "name: p}", "name: hidden}", 1)
	return []hostileCase{
		// Argo CD's repo-server applies dot-files and, with recurse, the
		// files of dot-directories (reposerver/repository/repository.go).
		{name: "Argo CD directory source: a .hidden.yaml is applied", args: []string{"check", "-f", "app.yaml", "--apps-root", "."},
			files: map[string]string{"app.yaml": dirApp("{}"), "app/pod.yaml": pinned, "app/.hidden.yaml": hiddenPod},
			code:  1, want: "app/.hidden.yaml", stdout: true},
		{name: "Argo CD directory source: a .dot/ directory is applied with recurse", args: []string{"check", "-f", "app.yaml", "--apps-root", "."},
			files: map[string]string{"app.yaml": dirApp("{recurse: true}"), "app/pod.yaml": pinned, "app/.dot/pod.yaml": hiddenPod},
			code:  1, want: "app/.dot/pod.yaml", stdout: true},
	}
}
