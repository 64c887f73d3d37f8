package pipeline

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/suggest"
)

// checkExclusions, at the end of Plan (so every command that runs the
// pipeline: check, diff, render, selftest, status): every --exclude-app
// names an Application, ApplicationSet, Flux Kustomization or HelmRelease
// of the run (its inputs or what their sources render). A name that
// matches none is a usage error (exit 2) naming it, with the closest name:
// a misspelt exclusion leaves the app it meant in scope, or takes nothing
// out of it unnoticed. When a render failed the message says that it may
// have held the name. Options.UnmatchedExclusionsOK skips it.
func (s *session) checkExclusions(units []*Unit) error {
	if s.o.UnmatchedExclusionsOK {
		return nil
	}
	names := s.flagExclusions()
	if len(names) == 0 {
		return nil
	}
	var owners []*yaml.RNode
	failed := ""
	for _, u := range units {
		if u.Err != nil {
			failed = "; a render failed (" + u.Input() + "): what it would hold is unknown"
		}
		for _, r := range u.Resources {
			if IsAppOwner(r) {
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
		if found {
			continue
		}
		what := "no Application, ApplicationSet, Flux Kustomization or HelmRelease"
		if len(owners) == 0 {
			return &config.UsageError{Where: "--exclude-app", Err: fmt.Errorf("%q: the inputs hold %s%s", e, what, failed)}
		}
		return &config.UsageError{Where: "--exclude-app", Err: fmt.Errorf("%q names %s of the inputs%s; they hold %s%s", e, what, suggest.Phrase(e, candidates), someNames(candidates), failed)}
	}
	return nil
}

// flagExclusions are the exclusions --exclude-app added (Options.Flags).
func (s *session) flagExclusions() []string {
	if s.o.Flags == nil {
		return nil
	}
	spec := cloneSpec(*config.Default())
	if s.o.Config != nil {
		spec = cloneSpec(s.o.Config.Spec)
	}
	// A bad flag is reported by the unit's check (spec).
	_ = s.o.Flags(&spec)
	return spec.ArgoCD.FromFlag
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
