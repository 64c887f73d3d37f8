package plugin

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// checkExclusions: every --exclude-app names an Application,
// ApplicationSet, Flux Kustomization or HelmRelease of the run (its inputs
// or what their sources render). A name that matches none is a usage error
// (exit 2) naming it, with the closest name: a misspelt exclusion leaves
// the app it meant in scope, or takes nothing out of it unnoticed. When a
// render failed the message says that it may have held the name.
func checkExclusions(names []string, res *pipeline.Result) error {
	if len(names) == 0 {
		return nil
	}
	var owners []*yaml.RNode
	failed := ""
	for _, u := range res.Units {
		if u.Err != nil {
			failed = "; a render failed (" + u.Input() + "): what it would hold is unknown"
		}
		for _, r := range u.Resources {
			if pipeline.IsAppOwner(r) {
				owners = append(owners, r)
			}
		}
	}
	var candidates []string
	for _, r := range owners {
		candidates = append(candidates, manifest.Name(r), manifest.Namespace(r)+"/"+manifest.Name(r))
	}
	for _, e := range names {
		found := false
		for _, r := range owners {
			found = found || rules.ExcludeMatches(e, r)
		}
		if !found {
			what := "no Application, ApplicationSet, Flux Kustomization or HelmRelease"
			if len(owners) == 0 {
				return usageErr("--exclude-app", "%q: the inputs hold %s%s", e, what, failed)
			}
			return usageErr("--exclude-app", "%q names %s of the inputs%s; they hold %s%s", e, what, suggest(e, candidates), someNames(candidates), failed)
		}
	}
	return nil
}

// someNames lists at most five namespace/name entries.
func someNames(names []string) string {
	var short []string
	for _, n := range names {
		if strings.Contains(n, "/") {
			short = append(short, n)
		}
	}
	if len(short) > 5 {
		return strings.Join(short[:5], ", ") + ", …"
	}
	return strings.Join(short, ", ")
}
