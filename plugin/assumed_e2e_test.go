package plugin

import (
	"strings"
	"testing"
)

// Issue 19, item 3: a repository the gate only assumed. In a checkout
// without git remotes and without --repo-url every Application's repoURL
// was taken for the checkout, silently. Now the first repository named is
// taken for it and one info line says so and names --repo-url; a source of
// any other repository is no verdict naming --repo-url.
func TestE2EAssumedRepository(t *testing.T) {
	const assumed = "has no git remote and no --repo-url was given: the gate took it for https://github.com/kubectl-gate/kubectl-gate.git"
	// examples/apps: every Application names this repository.
	r := runGate(t, checkout(t, map[string]string{}), "check", "-f", "examples/apps/", "--apps-root", ".")
	if r.Code != 0 || strings.Count(r.Stdout, assumed) != 1 || !strings.Contains(r.Stdout, "INFO [argocd-source-not-rendered]") ||
		!strings.Contains(r.Stdout, "pass --repo-url https://github.com/kubectl-gate/kubectl-gate.git") {
		t.Errorf("one repository named: exit %d, want 0 with one info line naming it and --repo-url\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Named with --repo-url: nothing is assumed.
	r = runGate(t, checkout(t, map[string]string{}), "check", "-f", "examples/apps/", "--apps-root", ".", "--repo-url", "https://github.com/kubectl-gate/kubectl-gate.git")
	if r.Code != 0 || strings.Contains(r.Stdout, "has no git remote") {
		t.Errorf("--repo-url: exit %d, want 0 and no assumption\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Another repository beside it (the acme/payments-service@v2.3.0):
	// before, rendered from the local tree and passed.
	other := map[string]string{"examples/apps/payments.yaml": strings.ReplaceAll(app("{repoURL: https://github.com/acme/payments-service.git, path: examples/overlays/prod, targetRevision: v2.3.0}", "shop-prod"), "name: bad", "name: payments")}
	r = runGate(t, checkout(t, other), "check", "-f", "examples/apps/", "--apps-root", ".")
	if r.Code != 3 || !strings.Contains(r.Stdout, "repository https://github.com/acme/payments-service.git is not the one checked out") ||
		!strings.Contains(r.Stdout, "pass --repo-url with the checkout's repository") {
		t.Errorf("a second repository: exit %d, want 3 naming it and --repo-url\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
