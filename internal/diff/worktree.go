package diff

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/gitrev"
)

// Worktree is a temporary git worktree of a revision (gitrev.Worktree).
type Worktree = gitrev.Worktree

// Toplevel returns the top directory of the git repository holding dir.
func Toplevel(ctx context.Context, dir string) (string, error) { return gitrev.Toplevel(ctx, dir) }

// Checkout checks ref out, detached, into a new temporary directory, as a
// worktree of the repository at repo.
func Checkout(ctx context.Context, repo, ref string) (*Worktree, error) {
	return gitrev.Add(ctx, repo, ref, "kubectl-gate-diff-")
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	return gitrev.Run(ctx, dir, args...)
}

// ChangedPaths returns the absolute paths that differ between rev and the
// working tree of the repository at top: tracked files changed, added or
// deleted since rev (committed, staged or not), and every untracked file,
// ignored ones included (a directory wholly untracked is one entry ending
// in a separator).
func ChangedPaths(ctx context.Context, top, rev string) ([]string, error) {
	tracked, err := git(ctx, top, "diff", "--name-only", "--no-renames", "-z", rev, "--")
	if err != nil {
		return nil, fmt.Errorf("listing the files changed since %.12s: %w", rev, err)
	}
	untracked, err := git(ctx, top, "ls-files", "--others", "--directory", "-z")
	if err != nil {
		return nil, fmt.Errorf("listing the untracked files: %w", err)
	}
	var out []string
	for _, p := range strings.Split(tracked+untracked, "\x00") {
		if p == "" {
			continue
		}
		abs := filepath.Join(top, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			abs += string(filepath.Separator)
		}
		out = append(out, abs)
	}
	return out, nil
}
