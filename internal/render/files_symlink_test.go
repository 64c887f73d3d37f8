package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// -f DIR follows no symlink out of the repository holding the directory
// (a pull request adds one to have a file outside read and reported); a
// link that stays inside, as a ConfigMap mount's ..data, is read.
func TestFilesDirSymlinks(t *testing.T) {
	out := testutil.WriteFiles(t, t.TempDir(), map[string]string{"secret.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked}\ndata: {token: TOPSECRET_canary}\n"})
	dir := tree(t, map[string]string{
		"d/good.yaml":                     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n",
		"mount/..2024_01_01/mounted.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mounted}\n",
	})
	must(t, os.Symlink("..2024_01_01", filepath.Join(dir, "mount", "..data")))
	must(t, os.Symlink(filepath.Join("..data", "mounted.yaml"), filepath.Join(dir, "mount", "mounted.yaml")))
	must(t, os.Symlink(filepath.Join(out, "secret.yaml"), filepath.Join(dir, "d", "z.yaml")))
	t.Chdir(dir)
	_, err := Files([]string{"d"}, nil, false, 0)
	var escape *fsbound.EscapeError
	if !errors.As(err, &escape) || !strings.Contains(err.Error(), "d/z.yaml is a symlink that leaves") {
		t.Errorf("-f d: %v, want d/z.yaml refused as a symlink out of the repository", err)
	}
	nodes, err := Files([]string{"mount"}, nil, false, 0)
	if err != nil || len(nodes) != 1 || nodes[0].GetName() != "mounted" {
		t.Errorf("-f mount: %d objects, %v; want the mounted ConfigMap", len(nodes), err)
	}
	// A file the caller names is the caller's choice.
	if nodes, err := Files([]string{filepath.Join("d", "z.yaml")}, nil, false, 0); err != nil || len(nodes) != 1 {
		t.Errorf("-f d/z.yaml: %d objects, %v; want the named file read", len(nodes), err)
	}
}
