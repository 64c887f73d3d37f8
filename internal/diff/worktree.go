package diff

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Worktree is a temporary git worktree of a revision. Remove it on every
// exit path; it is safe to call Remove more than once and concurrently.
type Worktree struct {
	// Dir is the worktree's directory; Rev the commit checked out.
	Dir, Rev string
	repo     string
	once     sync.Once
	err      error
}

// Toplevel returns the top directory of the git repository holding dir.
func Toplevel(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("finding the git repository of %s: %w", dir, err)
	}
	return filepath.EvalSymlinks(strings.TrimSpace(out))
}

// Checkout checks ref out, detached, into a new temporary directory, as a
// worktree of the repository at repo.
func Checkout(ctx context.Context, repo, ref string) (*Worktree, error) {
	rev, err := git(ctx, repo, "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("resolving --base %s: %w", ref, err)
	}
	dir, err := os.MkdirTemp("", "kubectl-gate-diff-")
	if err != nil {
		return nil, fmt.Errorf("checking out %s: %w", ref, err)
	}
	w := &Worktree{Dir: dir, Rev: strings.TrimSpace(rev), repo: repo}
	if _, err := git(ctx, repo, "worktree", "add", "--detach", "--quiet", dir, w.Rev); err != nil {
		w.Remove()
		return nil, fmt.Errorf("checking out %s: %w", ref, err)
	}
	return w, nil
}

// Remove deletes the worktree and its directory and forgets it in the
// repository. It does not depend on a context: it runs after a deadline or
// a signal too.
func (w *Worktree) Remove() error {
	w.once.Do(func() {
		_, _ = git(context.Background(), w.repo, "worktree", "remove", "--force", w.Dir)
		err := os.RemoveAll(w.Dir) // what git left, or all of it if git failed
		_, _ = git(context.Background(), w.repo, "worktree", "prune")
		if err != nil {
			w.err = fmt.Errorf("removing worktree %s: %w", w.Dir, err)
		}
	})
	return w.err
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
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
