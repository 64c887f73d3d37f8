package gitrev

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

// Add checks ref out, detached, into a new temporary directory named
// prefix*, as a worktree of the repository at repo.
func Add(ctx context.Context, repo, ref, prefix string) (*Worktree, error) {
	rev, err := git(ctx, repo, "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", ref, err)
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, fmt.Errorf("checking out %s: %w", ref, err)
	}
	w := &Worktree{Dir: dir, Rev: strings.TrimSpace(rev), repo: repo}
	if _, err := git(ctx, repo, "worktree", "add", "--detach", "--quiet", dir, w.Rev); err != nil {
		_ = w.Remove()
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

// Run runs git with args in dir and returns its standard output; the
// error carries git's standard error.
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	return git(ctx, dir, args...)
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// The repository's own config must not run programs or change what a
	// ref names: no pager, no hooks run by these commands, no prompts.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_OPTIONAL_LOCKS=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
