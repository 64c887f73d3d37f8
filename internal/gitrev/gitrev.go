package gitrev

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Checkout is the revision of a checkout.
type Checkout struct {
	// Root is the checkout's top directory (the git toplevel, else the
	// directory given).
	Root string
	// Git is false when the directory is not in a git repository: only
	// HEAD, an empty revision and the target branch name the checkout.
	Git bool
	// Commit is the commit checked out; Branch its branch, "" when
	// detached; Target the branch it merges into ("" when unknown).
	Commit, Branch, Target string
}

// Open reads the revision of the checkout at dir. target is the branch
// the checkout merges into (--target-branch); "" takes the default branch
// of the remote origin (refs/remotes/origin/HEAD), when the clone has it.
// A directory outside any git repository is a Checkout without Git, not
// an error: what it cannot resolve is unknown.
func Open(ctx context.Context, dir, target string) (*Checkout, error) {
	c := &Checkout{Root: dir, Target: shortBranch(target)}
	top, err := Toplevel(ctx, dir)
	if err != nil {
		return c, nil
	}
	commit, err := git(ctx, top, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		// A repository without a commit has no history to render from.
		return c, nil
	}
	c.Git, c.Commit = true, strings.TrimSpace(commit)
	if b, err := git(ctx, top, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		c.Branch = strings.TrimSpace(b)
	}
	if c.Target == "" {
		if h, err := git(ctx, top, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"); err == nil {
			c.Target = strings.TrimPrefix(strings.TrimSpace(h), "origin/")
		}
	}
	return c, nil
}

// Describe names the checkout's revision for messages.
func (c *Checkout) Describe() string {
	var parts []string
	if !c.Git {
		parts = append(parts, "not a git checkout with a commit, so only HEAD and the target branch name it")
	} else {
		b := c.Branch
		if b == "" {
			b = "detached HEAD"
		}
		parts = append(parts, fmt.Sprintf("%s at %.12s", b, c.Commit))
	}
	if c.Target != "" {
		parts = append(parts, "target branch "+c.Target)
	} else {
		parts = append(parts, "no target branch (--target-branch)")
	}
	return "the checkout " + c.Root + " is " + strings.Join(parts, ", ")
}

// Kind says where a revision renders from.
type Kind int

const (
	// Current: the checkout itself.
	Current Kind = iota
	// Other: another commit of the local history (Resolved.Commit).
	Other
	// Unknown: the local history does not have it (Resolved.Why).
	Unknown
)

// Resolved is where a revision renders from.
type Resolved struct {
	Kind Kind
	// Commit is the commit of an Other revision; Ref what it resolved
	// through ("refs/tags/v1.2.0" for a semver range).
	Commit, Ref string
	// Why says, for Unknown, what was missing.
	Why string
}

var (
	fullSHA  = regexp.MustCompile(`^[0-9a-f]{40}$|^[0-9a-f]{64}$`)
	shortSHA = regexp.MustCompile(`^[0-9a-f]{7,39}$`)
)

// RefName reports whether s may be looked up as a ref name: what git's
// check-ref-format allows for a branch or tag, without the revision
// syntax (~ ^ : @{ ..) that would make git read it as something else.
func RefName(s string) bool {
	if s == "" || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") ||
		strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") || strings.Contains(s, "..") ||
		strings.Contains(s, "//") || strings.Contains(s, "@{") || s == "@" {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, part := range strings.Split(s, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// Resolve resolves an Argo CD targetRevision (or an ApplicationSet git
// generator's revision) as the repo-server does: HEAD and "" are the
// default branch (the checkout here); then a full commit SHA; then a
// branch or tag of that name (or a full ref); then a semver constraint
// against the tags, the highest match; then a truncated SHA.
func (c *Checkout) Resolve(ctx context.Context, rev string) Resolved {
	rev = strings.TrimSpace(rev)
	if rev == "" || rev == "HEAD" {
		return Resolved{Kind: Current}
	}
	if r, ok := c.named(rev); ok {
		return r
	}
	if fullSHA.MatchString(rev) {
		return c.commit(ctx, rev, rev)
	}
	if r, ok := c.ref(ctx, rev); ok {
		return r
	}
	if cons, err := semver.NewConstraint(rev); err == nil && !shortSHA.MatchString(rev) {
		return c.semver(ctx, rev, cons)
	}
	if shortSHA.MatchString(rev) {
		return c.commit(ctx, rev, rev)
	}
	return c.unknown(fmt.Sprintf("no branch, tag or commit %q", rev))
}

// FluxRef is a Flux GitRepository's spec.ref.
type FluxRef struct {
	Branch, Tag, SemVer, Name, Commit string
}

// String names the ref as the GitRepository says it.
func (r FluxRef) String() string {
	var parts []string
	for _, f := range []struct{ k, v string }{{"commit", r.Commit}, {"name", r.Name}, {"semver", r.SemVer}, {"tag", r.Tag}, {"branch", r.Branch}} {
		if f.v != "" {
			parts = append(parts, f.k+": "+f.v)
		}
	}
	if len(parts) == 0 {
		return "no ref (branch master)"
	}
	return strings.Join(parts, ", ")
}

// ResolveFlux resolves a GitRepository's ref as source-controller does:
// commit first, then name, semver, tag, branch; no ref at all is branch
// master.
func (c *Checkout) ResolveFlux(ctx context.Context, r FluxRef) Resolved {
	switch {
	case r.Commit != "":
		if !fullSHA.MatchString(r.Commit) && !shortSHA.MatchString(r.Commit) {
			return c.unknown(fmt.Sprintf("commit %q is not a commit SHA", r.Commit))
		}
		return c.commit(ctx, r.Commit, r.Commit)
	case r.Name != "":
		switch {
		case strings.HasPrefix(r.Name, "refs/heads/"):
			return c.branch(ctx, strings.TrimPrefix(r.Name, "refs/heads/"))
		case strings.HasPrefix(r.Name, "refs/tags/"):
			return c.tag(ctx, strings.TrimPrefix(r.Name, "refs/tags/"))
		}
		return c.unknown(fmt.Sprintf("ref name %q is neither refs/heads/… nor refs/tags/…: the local history cannot tell what the remote has under it", r.Name))
	case r.SemVer != "":
		cons, err := semver.NewConstraint(r.SemVer)
		if err != nil {
			return c.unknown(fmt.Sprintf("semver %q is not a semver range: %v", r.SemVer, err))
		}
		return c.semver(ctx, r.SemVer, cons)
	case r.Tag != "":
		return c.tag(ctx, r.Tag)
	case r.Branch != "":
		return c.branch(ctx, r.Branch)
	}
	return c.branch(ctx, "master")
}

// named: the checkout's own branch or target branch, by name.
func (c *Checkout) named(rev string) (Resolved, bool) {
	b := shortBranch(rev)
	if b != "" && (b == c.Branch || b == c.Target) {
		return Resolved{Kind: Current}, true
	}
	return Resolved{}, false
}

func shortBranch(s string) string {
	s = strings.TrimPrefix(s, "refs/heads/")
	return strings.TrimPrefix(s, "refs/remotes/origin/")
}

// branch resolves a branch: the remote-tracking one of origin (what the
// controllers see), else the local one.
func (c *Checkout) branch(ctx context.Context, b string) Resolved {
	if r, ok := c.named(b); ok {
		return r
	}
	if !RefName(b) {
		return c.unknown(fmt.Sprintf("%q is not a branch name", b))
	}
	for _, ref := range []string{"refs/remotes/origin/" + b, "refs/heads/" + b} {
		if r, ok := c.lookup(ctx, ref); ok {
			return r
		}
	}
	return c.unknown(fmt.Sprintf("no branch %q", b))
}

func (c *Checkout) tag(ctx context.Context, t string) Resolved {
	if !RefName(t) {
		return c.unknown(fmt.Sprintf("%q is not a tag name", t))
	}
	if r, ok := c.lookup(ctx, "refs/tags/"+t); ok {
		return r
	}
	return c.unknown(fmt.Sprintf("no tag %q", t))
}

// ref looks rev up as Argo CD matches it against the remote's refs: a
// full ref name, else a branch or tag of that short name.
func (c *Checkout) ref(ctx context.Context, rev string) (Resolved, bool) {
	if !RefName(rev) || !c.Git {
		return Resolved{}, false
	}
	cands := []string{"refs/remotes/origin/" + rev, "refs/heads/" + rev, "refs/tags/" + rev}
	if strings.HasPrefix(rev, "refs/") {
		cands = []string{rev}
		if b, ok := strings.CutPrefix(rev, "refs/heads/"); ok {
			cands = []string{"refs/remotes/origin/" + b, rev}
		}
	}
	for _, ref := range cands {
		if r, ok := c.lookup(ctx, ref); ok {
			return r, true
		}
	}
	return Resolved{}, false
}

// lookup resolves a full ref name to its commit.
func (c *Checkout) lookup(ctx context.Context, ref string) (Resolved, bool) {
	if !c.Git {
		return Resolved{}, false
	}
	out, err := git(ctx, c.Root, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return Resolved{}, false
	}
	return c.at(strings.TrimSpace(out), ref), true
}

func (c *Checkout) at(commit, ref string) Resolved {
	if commit == c.Commit {
		return Resolved{Kind: Current, Commit: commit, Ref: ref}
	}
	return Resolved{Kind: Other, Commit: commit, Ref: ref}
}

// commit resolves a (possibly truncated) commit SHA.
func (c *Checkout) commit(ctx context.Context, sha, what string) Resolved {
	sha = strings.ToLower(sha)
	if c.Git && strings.HasPrefix(c.Commit, sha) {
		return Resolved{Kind: Current, Commit: c.Commit}
	}
	if !c.Git {
		return c.unknown(fmt.Sprintf("commit %s cannot be looked up", what))
	}
	out, err := git(ctx, c.Root, "rev-parse", "--verify", "--quiet", "--end-of-options", sha+"^{commit}")
	if err != nil {
		return c.unknown(fmt.Sprintf("no commit %s in the local history (a shallow clone? fetch it)", what))
	}
	return c.at(strings.TrimSpace(out), sha)
}

// semver picks the highest local tag the constraint admits, as Argo CD's
// and Flux's resolvers do (tags that do not parse as semver are ignored).
func (c *Checkout) semver(ctx context.Context, rev string, cons *semver.Constraints) Resolved {
	if !c.Git {
		return c.unknown(fmt.Sprintf("semver range %q needs the tags of a git history", rev))
	}
	out, err := git(ctx, c.Root, "for-each-ref", "--format=%(refname:strip=2)", "refs/tags")
	if err != nil {
		return c.unknown(fmt.Sprintf("listing tags for semver range %q: %v", rev, err))
	}
	var best *semver.Version
	bestTag := ""
	for _, t := range strings.Split(strings.TrimSpace(out), "\n") {
		v, err := semver.NewVersion(t)
		if err != nil || !cons.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestTag = v, t
		}
	}
	if best == nil {
		return c.unknown(fmt.Sprintf("no local tag matches semver range %q", rev))
	}
	if r, ok := c.lookup(ctx, "refs/tags/"+bestTag); ok {
		return r
	}
	return c.unknown(fmt.Sprintf("tag %s (semver range %q) does not name a commit", bestTag, rev))
}

func (c *Checkout) unknown(why string) Resolved {
	return Resolved{Kind: Unknown, Why: why}
}
