package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/render"
)

func TestNormalizeRepo(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/Org/Repo.git":     "github.com/org/repo",
		"https://github.com/org/repo/":        "github.com/org/repo",
		"git@github.com:org/repo.git":         "github.com/org/repo",
		"ssh://git@gitlab.example.com/a/b/c":  "gitlab.example.com/a/b/c",
		"https://user@dev.azure.com/o/p/_git": "dev.azure.com/o/p/_git",
	} {
		if got := render.NormalizeRepoURL(in); got != want {
			t.Errorf("render.NormalizeRepoURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGitRemotesOfAWorktree(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "main", ".git")
	wt := filepath.Join(main, "worktrees", "wt")
	for p, content := range map[string]string{
		filepath.Join(main, "config"):      "[remote \"origin\"]\n\turl = git@github.com:org/repo.git\n[remote \"fork\"]\n\turl = https://github.com/me/repo\n",
		filepath.Join(wt, "commondir"):     "../..\n",
		filepath.Join(dir, "wt", ".git"):   "gitdir: " + wt + "\n",
		filepath.Join(dir, "none", "x.md"): "",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := render.GitRemotes(filepath.Join(dir, "wt")); strings.Join(got, " ") != "github.com/org/repo github.com/me/repo" {
		t.Errorf("worktree remotes %v", got)
	}
	if got := render.GitRemotes(filepath.Join(dir, "none")); got != nil {
		t.Errorf("no checkout: remotes %v, want none", got)
	}
}
