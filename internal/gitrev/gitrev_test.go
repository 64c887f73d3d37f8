package gitrev

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo builds a real repository: main with two commits (the second is
// checked out on branch feature), branch release-1, tags v1.0.0, v1.2.0,
// v2.0.0 and not-semver, and a clone of it whose origin/HEAD is main.
type repo struct {
	t                *testing.T
	dir              string
	main, rel, feat  string
	v100, v120, v200 string
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=gate", "-c", "user.email=gate@example.com", "-c", "init.defaultBranch=main", "-c", "advice.detachedHead=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func commit(t *testing.T, dir, file, text string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "add", file)
	run(t, dir, "commit", "-q", "-m", file+" "+text)
	return run(t, dir, "rev-parse", "HEAD")
}

func newRepo(t *testing.T) *repo {
	r := &repo{t: t, dir: t.TempDir()}
	run(t, r.dir, "init", "-q")
	r.v100 = commit(t, r.dir, "a", "1")
	run(t, r.dir, "tag", "v1.0.0")
	r.v120 = commit(t, r.dir, "a", "2")
	run(t, r.dir, "tag", "v1.2.0")
	run(t, r.dir, "tag", "not-semver")
	run(t, r.dir, "checkout", "-q", "-b", "release-1")
	r.rel = commit(t, r.dir, "a", "release")
	run(t, r.dir, "checkout", "-q", "main")
	r.v200 = commit(t, r.dir, "a", "3")
	run(t, r.dir, "tag", "v2.0.0")
	r.main = r.v200
	return r
}

// clone clones the repository (origin/HEAD: main) and checks out a new
// branch feature with one more commit.
func (r *repo) clone() string {
	dir := filepath.Join(r.t.TempDir(), "clone")
	run(r.t, filepath.Dir(dir), "clone", "-q", r.dir, dir)
	run(r.t, dir, "checkout", "-q", "-b", "feature")
	r.feat = commit(r.t, dir, "b", "feature")
	return dir
}

func TestOpen(t *testing.T) {
	r := newRepo(t)
	dir := r.clone()
	c, err := Open(context.Background(), filepath.Join(dir), "")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Git || c.Commit != r.feat || c.Branch != "feature" || c.Target != "main" {
		t.Fatalf("Open = %+v, want feature at %s, target main", c, r.feat)
	}
	c, _ = Open(context.Background(), dir, "refs/heads/release-1")
	if c.Target != "release-1" {
		t.Fatalf("--target-branch refs/heads/release-1: Target = %q", c.Target)
	}
	plain, _ := Open(context.Background(), t.TempDir(), "")
	if plain.Git || plain.Target != "" || !strings.Contains(plain.Describe(), "not a git checkout with a commit") {
		t.Fatalf("a plain directory: %+v %s", plain, plain.Describe())
	}
}

func TestResolve(t *testing.T) {
	r := newRepo(t)
	dir := r.clone()
	ctx := context.Background()
	c, _ := Open(ctx, dir, "")
	cases := []struct {
		rev    string
		kind   Kind
		commit string
	}{
		{"", Current, ""},
		{"HEAD", Current, ""},
		{"feature", Current, ""},         // the checkout's branch
		{"main", Current, ""},            // its target branch
		{"refs/heads/main", Current, ""}, // the same, as a full ref
		{r.feat, Current, r.feat},        // its commit
		{r.feat[:8], Current, r.feat},
		{"release-1", Other, r.rel}, // origin/release-1
		{"refs/heads/release-1", Other, r.rel},
		{"v1.0.0", Other, r.v100},
		{"refs/tags/v1.2.0", Other, r.v120},
		{r.rel, Other, r.rel},
		{r.v100[:10], Other, r.v100},
		{"1.*", Other, r.v120},
		{">=1.0.0 <2", Other, r.v120},
		{"*", Other, r.v200},
		{"~1.0", Other, r.v100},
		{"1.0.0", Other, r.v100}, // no tag 1.0.0: an equality constraint, v1.0.0 matches
		{"3.*", Unknown, ""},
		{"release-2", Unknown, ""},
		{"deadbeefdeadbeefdeadbeefdeadbeefdeadbeef", Unknown, ""},
		{"main~1", Unknown, ""}, // revision syntax is not a ref the controllers know
		{"main@{1}", Unknown, ""},
		{"--output=/tmp/x", Unknown, ""},
		{"HEAD:a", Unknown, ""},
	}
	for _, tc := range cases {
		got := c.Resolve(ctx, tc.rev)
		if got.Kind != tc.kind || (tc.commit != "" && got.Commit != tc.commit) {
			t.Errorf("Resolve(%q) = %+v, want kind %d commit %.8s", tc.rev, got, tc.kind, tc.commit)
		}
		if got.Kind == Unknown && got.Why == "" {
			t.Errorf("Resolve(%q): unknown without a reason", tc.rev)
		}
	}
}

func TestResolveFlux(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	// The original repository: on main, no origin: local branches count.
	c, _ := Open(ctx, r.dir, "")
	cases := []struct {
		ref    FluxRef
		kind   Kind
		commit string
	}{
		{FluxRef{Branch: "main"}, Current, ""},
		{FluxRef{Branch: "release-1"}, Other, r.rel},
		{FluxRef{Branch: "dev-team"}, Unknown, ""},
		{FluxRef{Tag: "v1.0.0"}, Other, r.v100},
		{FluxRef{Tag: "v9"}, Unknown, ""},
		{FluxRef{SemVer: ">=1.0.0 <2.0.0"}, Other, r.v120},
		{FluxRef{SemVer: "not a range"}, Unknown, ""},
		{FluxRef{Name: "refs/heads/release-1"}, Other, r.rel},
		{FluxRef{Name: "refs/tags/v2.0.0"}, Current, r.v200},
		{FluxRef{Name: "refs/pull/1/head"}, Unknown, ""},
		{FluxRef{Commit: r.v100, Branch: "main"}, Other, r.v100}, // commit wins
		{FluxRef{Commit: "zz"}, Unknown, ""},
		{FluxRef{Tag: "v1.0.0", Branch: "main"}, Other, r.v100}, // tag before branch
		{FluxRef{}, Unknown, ""},                                // master: not in this history
	}
	for _, tc := range cases {
		got := c.ResolveFlux(ctx, tc.ref)
		if got.Kind != tc.kind || (tc.commit != "" && got.Commit != tc.commit) {
			t.Errorf("ResolveFlux(%s) = %+v, want kind %d commit %.8s", tc.ref, got, tc.kind, tc.commit)
		}
	}
}

// A directory without git history knows only HEAD and the target branch
// it is told.
func TestResolveWithoutGit(t *testing.T) {
	ctx := context.Background()
	c, _ := Open(ctx, t.TempDir(), "main")
	for rev, want := range map[string]Kind{"": Current, "HEAD": Current, "main": Current, "release-1": Unknown, "1.*": Unknown, "0123456789abcdef0123456789abcdef01234567": Unknown} {
		if got := c.Resolve(ctx, rev); got.Kind != want {
			t.Errorf("Resolve(%q) without git = %+v, want %d", rev, got, want)
		}
	}
}

func TestWorktreeRemoved(t *testing.T) {
	r := newRepo(t)
	ctx := context.Background()
	w, err := Add(ctx, r.dir, "release-1", "kubectl-gate-test-")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(w.Dir, "a")); err != nil || string(b) != "release" || w.Rev != r.rel {
		t.Fatalf("worktree of release-1: %q %v rev %s", b, err, w.Rev)
	}
	if err := w.Remove(); err != nil {
		t.Fatal(err)
	}
	_ = w.Remove() // twice is fine
	if _, err := os.Stat(w.Dir); !os.IsNotExist(err) {
		t.Fatalf("worktree directory left: %v", err)
	}
	if out := run(t, r.dir, "worktree", "list"); strings.Count(out, "\n") != 0 {
		t.Fatalf("git still lists the worktree:\n%s", out)
	}
	if _, err := Add(ctx, r.dir, "no-such-branch", "kubectl-gate-test-"); err == nil {
		t.Fatal("Add of a missing revision succeeded")
	}
}

func FuzzRefName(f *testing.F) {
	for _, s := range []string{"main", "release/1.0", "-x", "a..b", "a@{1}", "HEAD:x", "refs/heads/x", ".hidden/x", "x.lock", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !RefName(s) {
			return
		}
		if strings.HasPrefix(s, "-") || strings.ContainsAny(s, " ~^:?*[\\") || strings.Contains(s, "..") || strings.Contains(s, "@{") {
			t.Fatalf("RefName(%q) accepted revision syntax", s)
		}
	})
}
