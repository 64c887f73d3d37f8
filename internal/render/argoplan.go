package render

// Planning the render of Argo CD Applications' sources from a checkout
// (--apps-root): which sources the gate renders, from where, and which
// renders are the same.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/helm"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
)

// CheckoutURLs returns the repoURLs that name the checkout at root: those
// given with --repo-url, else its git remotes (a CI clone's remote is often a
// local path or a mirror, which --repo-url corrects).
func CheckoutURLs(root string, given []string) []string {
	if len(given) == 0 {
		return GitRemotes(root)
	}
	out := make([]string, len(given))
	for i, u := range given {
		out[i] = NormalizeRepoURL(u)
	}
	return out
}

// SkipSource says why an Application's source is not rendered from the
// checkout at root (remotes: its git remotes), or "". `check --apps-root` and
// `status --apps-root` share it.
func SkipSource(root string, remotes []string, src argo.Source) string {
	switch {
	case src.Chart != "":
		return fmt.Sprintf("Helm chart %s from %s: the gate renders only charts in the checkout, it does not fetch them", src.Chart, src.RepoURL)
	case len(remotes) > 0 && !slices.Contains(remotes, NormalizeRepoURL(src.RepoURL)):
		// A CI clone's remote is often a local path or a mirror: say how to
		// name the checkout's repository when it is that one.
		return fmt.Sprintf("repository %s is not the one checked out at %s (%s); if the checkout is that repository (a clone from a local path or a mirror), pass --repo-url %s", src.RepoURL, root, strings.Join(remotes, ", "), src.RepoURL)
	}
	return ""
}

// LocalSource is how to render an Application's source from the checkout at
// root: root plus its path, with the Application's overrides; the error
// says that the path leaves the repository. Shared with status --apps-root.
func LocalSource(root string, app *yaml.RNode, src argo.Source) (ArgoSource, error) {
	spec := ArgoSource{Dir: filepath.Join(root, filepath.FromSlash(src.Path)), App: app.GetName(), Chart: src.Chart,
		Helm: src.Helm, Plugin: src.Plugin, Kustomize: src.Kustomize, Directory: src.Directory,
		HelmSpec: src.HelmSpec, Namespace: manifest.Str(app, "spec.destination.namespace"), Root: root, Field: src.Field}
	spec.AppFile, _ = manifest.FileAnnotations(app)
	// An ApplicationSet's generated Application has its root's line
	// cleared (its nodes are not the file's); a rendered one, no file.
	spec.AppLines = spec.AppFile != "" && app.YNode().Line > 0
	// "", ".", "./" and "a/../" name the repository root (issue 10: "./"
	// was refused).
	if clean := filepath.Clean(filepath.FromSlash(src.Path)); clean != "." && !filepath.IsLocal(clean) {
		return spec, fmt.Errorf("Application %s: %s %q leaves the repository", argo.AppName(app), src.PathField(), src.Path)
	}
	return spec, nil
}

// SourceKey identifies a render: the directory, the Application's
// overrides, and the Application's name when a parameter file names it.
func SourceKey(s ArgoSource) string {
	abs, _ := filepath.Abs(s.Dir)
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%t|%t", abs, s.Helm, s.Plugin)
	if s.Helm || s.HelmSpec != nil || helm.IsChart(s.Dir) {
		// A chart renders per release name and namespace.
		fmt.Fprintf(&b, "|%s|%s|%v|%v", s.App, s.Namespace, s.Refs, s.RefWhy)
	}
	if s.Kustomize != nil && s.Kustomize.Field("images") != nil {
		// a finding names the Application whose override set an image
		fmt.Fprintf(&b, "|%s|%s|%s", s.AppFile, s.App, s.Field)
	}
	for _, n := range []*yaml.RNode{s.Kustomize, s.Directory, s.HelmSpec} {
		if n != nil {
			b.WriteString("|" + n.MustString())
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir, ".argocd-source-"+s.App+".yaml")); err == nil {
		b.WriteString("|" + s.App)
	}
	return b.String()
}
