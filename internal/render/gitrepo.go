package render

import (
	"os"
	"path/filepath"
	"strings"
)

// GitRemotes returns the normalized URLs of the remotes of the repository
// checked out at dir; none when it is not a git checkout (then every
// repoURL is taken to be this repository, as --apps-root asserts).
func GitRemotes(dir string) []string {
	gitDir := filepath.Join(dir, ".git")
	if data, err := os.ReadFile(gitDir); err == nil { // a worktree: "gitdir: …"
		gitDir = strings.TrimSpace(strings.TrimPrefix(string(data), "gitdir:"))
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(dir, gitDir)
		}
		if common, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			gitDir = filepath.Join(gitDir, strings.TrimSpace(string(common)))
		}
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		return nil
	}
	var out []string
	inRemote := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			inRemote = strings.HasPrefix(line, "[remote ")
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && inRemote && strings.TrimSpace(k) == "url" {
			out = append(out, NormalizeRepoURL(v))
		}
	}
	return out
}

// NormalizeRepoURL reduces a git URL to host/path: https://github.com/a/b.git,
// git@github.com:a/b and ssh://git@github.com/a/b are all github.com/a/b.
func NormalizeRepoURL(url string) string {
	u := strings.ToLower(strings.TrimSpace(url))
	if _, rest, ok := strings.Cut(u, "://"); ok {
		u = rest
	} else if host, path, ok := strings.Cut(u, ":"); ok && !strings.Contains(host, "/") {
		u = host + "/" + path
	}
	if at := strings.Index(u, "@"); at >= 0 && at < strings.Index(u+"/", "/") {
		u = u[at+1:]
	}
	return strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git")
}
