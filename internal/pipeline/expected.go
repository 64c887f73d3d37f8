package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
)

// ExpectedFromApplication renders, from the checkout at root, every source
// of the live Application obj that deploys manifests, the way `check --apps-root` renders
// an Application of the input (render.SkipSource, render.LocalSource, render.RenderArgo),
// and returns the renders concatenated — the expected state of
// `status --apps-root` — with where they came from:
// "--apps-root . (spec.source.path examples/overlays/prod)".
//
// A source that cannot be rendered from root (a Helm chart, a plugin,
// another repository) is an error, never left out: the live objects compared
// with part of the render would give a false verdict.
//
// Each source renders from the revision it tracks, as check's do
// (revisions.go): HEAD, the checkout's branch or commit and the target
// branch (targetBranch, else the remote's default branch) from root;
// another branch, tag or commit of the local history from a temporary
// worktree, removed before it returns; a revision the history lacks is an
// error naming it. "$ref/…" Helm values files are read at their ref
// source's own revision.
func ExpectedFromApplication(ctx context.Context, obj *unstructured.Unstructured, root string, repoURLs []string, targetBranch string) (_ []*yaml.RNode, _ string, err error) {
	app, err := yaml.FromMap(obj.Object)
	if err != nil {
		return nil, "", fmt.Errorf("reading Application %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	name := argo.AppName(app)
	remotes := render.CheckoutURLs(root, repoURLs)
	revs := &revisions{root: root, target: targetBranch}
	defer func() {
		if cerr := revs.close(); cerr != nil && err == nil {
			err = fmt.Errorf("removing the worktrees of Application %s's revisions: %w", name, cerr)
		}
	}()
	// The ref sources' roots, each at its own revision (expander.refRoots).
	refs := &expander{s: &session{in: Inputs{AppsRoot: root}, revs: revs}, remotes: remotes}
	opts := render.Options{}
	var out []*yaml.RNode
	var from, notes []string
	for _, src := range argo.Sources(app) {
		if !src.Manifests() {
			continue
		}
		where := fmt.Sprintf("Application %s %s", name, src.Field)
		if why := render.SkipSource(root, remotes, src); why != "" {
			return nil, "", notRendered(where, root, why)
		}
		at := revs.argo(ctx, src.TargetRevision)
		if at.Assumed != "" {
			notes = append(notes, at.Assumed)
		}
		if at.Why != "" {
			return nil, "", notRendered(where, root, at.Why)
		}
		spec, err := render.LocalSource(at.Root, app, src)
		if err != nil {
			return nil, "", err
		}
		var note string
		spec.Refs, spec.RefWhy, note = refs.refRoots(ctx, app)
		if note != "" {
			notes = append(notes, note)
		}
		res, err := render.RenderArgo(spec, opts)
		var skip *render.SkipError
		switch {
		case errors.As(err, &skip):
			return nil, "", notRendered(where, root, fmt.Sprintf("%s %q: %s", src.PathField(), src.Path, skip.Reason))
		case err != nil:
			return nil, "", fmt.Errorf("%s: %s %q: %w", where, src.PathField(), src.Path, err)
		}
		out = append(out, res.Resources...)
		f := src.PathField() + " " + orDot(src.Path)
		if at.Label != "" {
			f += " at " + at.Label
		}
		from = append(from, f)
	}
	if len(from) == 0 {
		return nil, "", fmt.Errorf("Application %s names no source that deploys manifests: nothing to render from --apps-root %s", name, root)
	}
	desc := fmt.Sprintf("--apps-root %s (%s)", root, strings.Join(from, ", "))
	if len(notes) > 0 {
		desc += "; " + strings.Join(notes, "; ")
	}
	return out, desc, nil
}

func notRendered(where, root, why string) error {
	return fmt.Errorf("%s is not rendered from --apps-root %s: %s; the expected render would lack it "+
		"(without --apps-root, status compares the running images with status.summary.images)", where, root, why)
}

func orDot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

// ExpectedFromKustomization renders dir, the expected state of `status -k`.
func ExpectedFromKustomization(dir string) ([]*yaml.RNode, error) {
	res, err := render.Kustomize(dir, render.Options{})
	if err != nil {
		return nil, err
	}
	return res.Resources, nil
}
