// Package gitrev knows the revision of the checkout the gate renders from
// (--apps-root) and resolves the revisions that Argo CD Applications
// (targetRevision), ApplicationSet git generators (revision) and Flux
// GitRepositories (spec.ref) name against its local git history, as the
// controllers resolve them against the remote: HEAD, the checkout's
// branch, its commit, or the branch it merges into (--target-branch)
// render from the checkout; another branch, tag or commit the history has
// renders from a temporary worktree of it (Worktree); anything else is
// unknown, and the gate has no verdict on it. Semver constraints resolve
// against the local tags with Masterminds/semver, as both controllers do:
// the highest matching tag wins.
package gitrev
