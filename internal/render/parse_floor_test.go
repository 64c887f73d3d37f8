package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestReadRaisesFloor: the heap floor follows the input the gate reads
// (gcfloor.Input): a small file leaves the default floor, 7 MiB more
// raise it to InputFactor times all read, the same input read again whole
// (Read.Again) does not count twice, and without a floor (the user's GOGC)
// none is set.
func TestReadRaisesFloor(t *testing.T) {
	dir := t.TempDir()
	small, large := filepath.Join(dir, "small.yaml"), filepath.Join(dir, "large.yaml")
	var b strings.Builder
	for i := range 7 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata:\n  k: %s\n", i, strings.Repeat("x", 1<<20))
	}
	for path, body := range map[string]string{small: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: small}\n", large: b.String()} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(mode string) string {
		if mode == "floor" {
			gcfloor.Start(gcfloor.DefaultFloor)
		}
		if _, err := Files([]string{small}, nil, false, 1<<30); err != nil {
			return err.Error()
		}
		after := gcfloor.Floor()
		_, read, err := FilesEach([]string{large}, nil, 1<<30, func(int, []*yaml.RNode) {})
		if err != nil {
			return err.Error()
		}
		read1 := gcfloor.Floor()
		if _, err := read.Again(); err != nil {
			return err.Error()
		}
		return fmt.Sprintf("small=%d large=%d again=%d", after, read1, gcfloor.Floor())
	}
	size := func(p string) int {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return int(fi.Size())
	}
	read := (size(small) + size(large)) * gcfloor.InputFactor
	for _, tc := range []struct{ mode, want string }{
		{"floor", fmt.Sprintf("small=%d large=%d again=%d", gcfloor.DefaultFloor, read, read)},
		{"none", "small=0 large=0 again=0"},
	} {
		if got := testutil.InChild(t, tc.mode, run); got != tc.want {
			t.Errorf("%s: the child says %q, want %q", tc.mode, got, tc.want)
		}
	}
}
