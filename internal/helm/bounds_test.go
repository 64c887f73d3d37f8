package helm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// hostileChart writes a chart under repo/chart with the given templates
// and a secret beside the repository, and returns the chart directory and
// the repository.
func hostileChart(t *testing.T, files map[string]string) (chart, repo string) {
	t.Helper()
	base := t.TempDir()
	repo = filepath.Join(base, "repo")
	chart = filepath.Join(repo, "chart")
	all := map[string]string{"Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n"}
	for k, v := range files {
		all[k] = v
	}
	testutil.WriteFiles(t, chart, all)
	if err := os.WriteFile(filepath.Join(base, "secret"), []byte("CI_TOKEN=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return chart, repo
}

// Files a chart reads through helm (.Files.Get, .Files.Glob, a template,
// values.yaml) cannot lead out of the repository: a symlink that does is
// refused by name before helm's loader follows it, and what it points at
// never reaches the output or the error (issue 18).
func TestChartSymlinkLeavesTheRepository(t *testing.T) {
	for _, link := range []string{"files/leak.txt", "templates/leak.yaml", "values.yaml"} {
		t.Run(link, func(t *testing.T) {
			chart, repo := hostileChart(t, map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {x: {{ .Files.Get \"files/leak.txt\" | quote }}}\n"})
			if err := os.MkdirAll(filepath.Dir(filepath.Join(chart, link)), 0o755); err != nil {
				t.Fatal(err)
			}
			up := strings.Repeat("../", strings.Count(link, "/")+2)
			if err := os.Symlink(up+"secret", filepath.Join(chart, link)); err != nil {
				t.Fatal(err)
			}
			_, err := Render(context.Background(), chart, "chart", Options{Root: repo})
			var esc *fsbound.EscapeError
			if !errors.As(err, &esc) || !strings.Contains(err.Error(), link) {
				t.Fatalf("want the link %s refused, got %v", link, err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error holds the secret: %v", err)
			}
		})
	}
}

func TestFileDependencyOutsideTheRepository(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "lib")
	testutil.WriteFiles(t, outside, map[string]string{"Chart.yaml": "apiVersion: v2\nname: lib\nversion: 0.1.0\n", "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-outside}\n"})
	for name, repoURL := range map[string]string{"absolute": "file://" + outside, "dotdot": "file://../../../../../../../../../../.." + outside} {
		t.Run(name, func(t *testing.T) {
			chart, repo := hostileChart(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n- {name: lib, version: 0.1.0, repository: \"" + repoURL + "\"}\n"})
			_, err := Render(context.Background(), chart, "chart", Options{Root: repo})
			var out *fsbound.OutsideError
			if !errors.As(err, &out) || !strings.Contains(err.Error(), "dependency lib") {
				t.Fatalf("want the dependency refused, got %v", err)
			}
		})
	}
	// Inside the repository a file:// dependency still renders.
	chart, repo := hostileChart(t, map[string]string{"Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n- {name: lib, version: 0.1.0, repository: \"file://../lib\"}\n"})
	testutil.WriteFiles(t, filepath.Join(repo, "lib"), map[string]string{"Chart.yaml": "apiVersion: v2\nname: lib\nversion: 0.1.0\n", "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lib}\n"})
	if nodes, err := Render(context.Background(), chart, "chart", Options{Root: repo}); err != nil || len(nodes) != 1 {
		t.Fatalf("a dependency inside the repository: %d objects, %v", len(nodes), err)
	}
}

// Output bombs end as a *CapError naming the cap, within bounded memory.
func TestRenderCaps(t *testing.T) {
	for name, c := range map[string]struct {
		tmpl, want string
	}{
		"repeat of repeat":  {`{{ repeat 100000 (repeat 100000 "x") }}`, "over the output cap"},
		"a million objects": {"{{ range until 1000000 }}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c{{ . }}}\n{{ end }}", "over the cap of"},
		"200k objects":      {"{{ range until 200000 }}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c{{ . }}}\n{{ end }}", "rendered documents over the cap of 100000"},
		"until bomb":        {`{{ range until 100000000 }}x{{ end }}`, "elements are over the cap"},
	} {
		t.Run(name, func(t *testing.T) {
			chart, repo := hostileChart(t, map[string]string{"templates/bomb.yaml": c.tmpl})
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Render(context.Background(), chart, "chart", Options{Root: repo})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want %q, got %v", c.want, err)
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			t.Logf("%s: %v; total allocated %d MiB", name, err, (after.TotalAlloc-before.TotalAlloc)>>20)
		})
	}
}
