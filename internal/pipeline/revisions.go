package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/gitrev"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// Revisions (issue 19): a source renders from the revision it names. An
// Application's targetRevision, an ApplicationSet git generator's revision
// and a Flux GitRepository's spec.ref are resolved against the checkout's
// git history (internal/gitrev): HEAD, the checkout's branch or commit and
// its target branch (--target-branch, spec.argocd.targetBranch of the
// trusted config, else the remote's default branch) render from the
// checkout; another branch, tag or commit of the history from a temporary
// worktree of it, removed when the run ends on any path (Result.Close,
// stop.OnExit); anything else is not rendered: no verdict naming the
// revision and the checkout's.

// revisions resolves the revisions of one run and keeps its worktrees.
type revisions struct {
	root   string // --apps-root
	target string
	branch string // Inputs.CheckoutBranch

	once sync.Once
	co   *gitrev.Checkout
	top  string // the git toplevel; AppsRoot's path under it is kept

	mu    sync.Mutex
	trees map[string]*gitrev.Worktree // by commit
	// adopted is the revision a checkout without git history was taken
	// for (adopt).
	adopted string
}

// where is where one source renders from.
type where struct {
	// Root is the directory that stands for --apps-root: the checkout or
	// a worktree of the revision. Empty when it cannot be rendered.
	Root string
	// Label names another revision for messages ("release-1 (0123abcd4567)"),
	// "" for the checkout.
	Label string
	// Why says why it cannot be rendered.
	Why string
	// Assumed is the info line of a checkout without git history taken
	// for the revision a source names (adopt), on the first such source.
	Assumed string
}

func (r *revisions) open(ctx context.Context) *gitrev.Checkout {
	r.once.Do(func() {
		r.co, _ = gitrev.Open(ctx, r.root, r.target)
		if r.branch != "" {
			r.co.Branch = r.branch
		}
		if r.co.Git {
			if top, err := gitrev.Toplevel(ctx, r.root); err == nil {
				r.top = top
			}
		}
	})
	return r.co
}

// argo is where an Argo CD source (or git generator) of revision rev
// renders from.
func (r *revisions) argo(ctx context.Context, rev string) where {
	co := r.open(ctx)
	res := co.Resolve(ctx, rev)
	if w, ok := r.adopt(res, strings.TrimPrefix(strings.TrimSpace(rev), "refs/heads/")); ok {
		return w
	}
	return r.place(ctx, res, "revision "+quoteRev(rev))
}

// flux is where a Flux GitRepository's ref renders from.
func (r *revisions) flux(ctx context.Context, repo *yaml.RNode) where {
	ref := gitrev.FluxRef{
		Branch: yamlString(repo, "spec", "ref", "branch"), Tag: yamlString(repo, "spec", "ref", "tag"),
		SemVer: yamlString(repo, "spec", "ref", "semver"), Name: yamlString(repo, "spec", "ref", "name"),
		Commit: yamlString(repo, "spec", "ref", "commit"),
	}
	co := r.open(ctx)
	res := co.ResolveFlux(ctx, ref)
	name := ref.Branch
	switch {
	case ref.Commit != "":
		name = ref.Commit
	case ref.Name != "":
		name = strings.TrimPrefix(strings.TrimPrefix(ref.Name, "refs/heads/"), "refs/tags/")
	case ref.SemVer != "":
		name = ref.SemVer
	case ref.Tag != "":
		name = ref.Tag
	case ref.Branch == "":
		name = "master"
	}
	if w, ok := r.adopt(res, name); ok {
		return w
	}
	return r.place(ctx, res, "ref "+ref.String())
}

// adopt, in a checkout without git history and without a target branch
// (a CI workspace copy, a tarball), takes the checkout for the first
// revision a source names and says so once, as an info line; any other
// revision stays unknown: no verdict naming --target-branch. It is how the
// gate treats a checkout without a git remote (issue 19): a run that names
// one revision renders, never silently.
func (r *revisions) adopt(res gitrev.Resolved, name string) (where, bool) {
	if res.Kind != gitrev.Unknown || r.co.Git || r.co.Target != "" || name == "" {
		return where{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.adopted {
	case "":
		r.adopted = name
		return where{Root: r.root, Assumed: fmt.Sprintf("the checkout at %s has no git history and no --target-branch was given: the gate took it for revision %s, the first one the inputs name, and renders every source of that revision from it; pass --target-branch %s to say so (any other revision is no verdict)", r.root, name, name)}, true
	case name:
		return where{Root: r.root}, true
	}
	return where{}, false
}

func quoteRev(rev string) string {
	if rev == "" {
		return "HEAD"
	}
	return rev
}

func (r *revisions) place(ctx context.Context, res gitrev.Resolved, what string) where {
	switch res.Kind {
	case gitrev.Current:
		return where{Root: r.root}
	case gitrev.Other:
		label := fmt.Sprintf("%s (%.12s)", what, res.Commit)
		dir, err := r.worktree(ctx, res.Commit)
		if err != nil {
			return where{Why: fmt.Sprintf("%s: %v", label, err)}
		}
		return where{Root: dir, Label: label}
	}
	why := fmt.Sprintf("%s is not the checkout's revision and the local git history cannot render it: %s; %s", what, res.Why, r.co.Describe())
	if r.adopted != "" {
		why += fmt.Sprintf(", taken for revision %s (the first one named): pass --target-branch with the checkout's branch", r.adopted)
	}
	return where{Why: why}
}

// worktree checks a commit out once per run and returns the directory that
// stands for --apps-root in it.
func (r *revisions) worktree(ctx context.Context, commit string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.trees[commit]
	if w == nil {
		end := stop.Doing(ctx, "checking out "+commit)
		var err error
		w, err = gitrev.Add(ctx, r.top, commit, "kubectl-gate-rev-")
		end()
		if err != nil {
			return "", err
		}
		if r.trees == nil {
			r.trees = map[string]*gitrev.Worktree{}
		}
		r.trees[commit] = w
		stop.OnExit(ctx, func() { _ = w.Remove() })
	}
	rel, err := filepath.Rel(r.top, absEval(r.root))
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("--apps-root %s is not inside its git repository %s", r.root, r.top)
	}
	return filepath.Join(w.Dir, rel), nil
}

func absEval(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if e, err := filepath.EvalSymlinks(p); err == nil {
		p = e
	}
	return p
}

// close removes the run's worktrees.
func (r *revisions) close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var first error
	for _, w := range r.trees {
		if err := w.Remove(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// refRoots maps the ref: names of an Application's sources that are the
// checkout's repository to the directory that stands for --apps-root at
// each one's own targetRevision, for "$ref/…" Helm value files: Argo CD
// reads a ref source at its revision, not at the revision of the chart
// source that names it. A ref whose revision the local history cannot
// render is in why instead (the values file is then no verdict). note is
// the info line of a checkout without git history taken for a revision.
func (a *expander) refRoots(ctx context.Context, app *yaml.RNode) (roots, why map[string]string, note string) {
	roots, why = map[string]string{}, map[string]string{}
	for _, s := range argo.Sources(app) {
		if s.Ref == "" || s.Chart != "" || render.SkipSource(a.s.in.AppsRoot, a.remotes, s) != "" {
			continue
		}
		at := a.s.revs.argo(ctx, s.TargetRevision)
		note = joinNotes(note, at.Assumed)
		if at.Why != "" {
			why[s.Ref] = fmt.Sprintf("%s (ref %s): %s", s.Field, s.Ref, at.Why)
			continue
		}
		roots[s.Ref] = at.Root
	}
	return roots, why, note
}
