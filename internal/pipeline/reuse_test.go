package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestKustomizeDirs: the walk follows resources, components and
// generators directories, including one that contributes nothing, and
// refuses what it cannot vouch for.
func TestKustomizeDirs(t *testing.T) {
	root := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"app/overlay/kustomization.yaml":      "resources: [../base, extra.yaml]\ncomponents: [../../components/quiet]\n",
		"app/overlay/extra.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"app/base/kustomization.yaml":         "resources: [deploy.yaml]\n",
		"app/base/deploy.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\n",
		"components/quiet/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
		"remote/kustomization.yaml":           "resources: [https://example.com/x.yaml]\n",
		"chart/kustomization.yaml":            "helmCharts: [{name: x}]\n",
		"missing/kustomization.yaml":          "resources: [github.com/org/repo/dir]\n",
		"outside/kustomization.yaml":          "resources: [../app/base/deploy.yaml]\n",
	})
	root, _ = filepath.EvalSymlinks(root)
	dirs, why := kustomizeDirs(filepath.Join(root, "app/overlay"))
	if why != "" {
		t.Fatal(why)
	}
	want := []string{"app/overlay", "app/base", "components/quiet"}
	if len(dirs) != len(want) {
		t.Fatalf("dirs %v, want %v", dirs, want)
	}
	for i, d := range want {
		if dirs[i] != filepath.Join(root, d) {
			t.Errorf("dirs[%d] = %s, want %s", i, dirs[i], d)
		}
	}
	for dir, reason := range map[string]string{"remote": "remote", "chart": "helmCharts", "missing": "not a local file", "outside": "outside its directory"} {
		if _, why := kustomizeDirs(filepath.Join(root, dir)); !strings.Contains(why, reason) {
			t.Errorf("%s: why %q, want %q", dir, why, reason)
		}
	}
	if err := os.Symlink(filepath.Join(root, "app/base"), filepath.Join(root, "app/link")); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, root, map[string]string{"linked/kustomization.yaml": "resources: [../app/link]\n"})
	if _, why := kustomizeDirs(filepath.Join(root, "linked")); !strings.Contains(why, "symlink") {
		t.Errorf("through a symlink: why %q", why)
	}
	if why := noSymlinks(filepath.Join(root, "app")); !strings.Contains(why, "symlink") {
		t.Errorf("noSymlinks: %q", why)
	}
}

func TestBelow(t *testing.T) {
	for _, c := range []struct {
		p, d string
		want bool
	}{{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/a/b/", "/a/b", true}, {"/a/b", "/a/b/", true}, {"/a", "/a/b", false}} {
		if got := below(c.p, c.d); got != c.want {
			t.Errorf("below(%q, %q) = %t", c.p, c.d, got)
		}
	}
}

// FuzzKustomizationRefs: a pull request writes the kustomization files the
// walk reads; no input panics it, and a remote entry is never followed.
func FuzzKustomizationRefs(f *testing.F) {
	for _, s := range []string{"resources: [a, ../b]\n", "components: [https://x/y]\n", "helmCharts: [{name: x}]\n", "transformers:\n- |\n  kind: X\n", "resources: {a: 1}\n", "bases: [git@github.com:x/y]\n", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		refs, why := kustomizationRefs(data)
		if why != "" && refs != nil {
			t.Fatalf("refs %v with why %q", refs, why)
		}
		for _, r := range refs {
			if strings.Contains(r, "://") || filepath.IsAbs(r) {
				t.Fatalf("followed %q", r)
			}
		}
	})
}
