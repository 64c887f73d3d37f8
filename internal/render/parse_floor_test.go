package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestParseRaisesFloor: the heap floor follows the input read
// (gcfloor.Input): a small stream leaves the default floor, 7 MiB more
// raise it to InputFactor times all read, and without a floor (the user's
// GOGC) none is set.
func TestParseRaisesFloor(t *testing.T) {
	small := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: small}\n")
	var b strings.Builder
	for i := range 7 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata:\n  k: %s\n", i, strings.Repeat("x", 1<<20))
	}
	large := []byte(b.String())
	run := func(mode string) string {
		if mode == "floor" {
			gcfloor.Start(gcfloor.DefaultFloor)
		}
		if _, err := Parse(small, "small.yaml"); err != nil {
			return err.Error()
		}
		after := gcfloor.Floor()
		if _, err := Parse(large, "large.yaml"); err != nil {
			return err.Error()
		}
		return fmt.Sprintf("small=%d large=%d", after, gcfloor.Floor())
	}
	for _, tc := range []struct{ mode, want string }{
		{"floor", fmt.Sprintf("small=%d large=%d", gcfloor.DefaultFloor, (len(small)+len(large))*gcfloor.InputFactor)},
		{"none", "small=0 large=0"},
	} {
		if got := testutil.InChild(t, tc.mode, run); got != tc.want {
			t.Errorf("%s: the child says %q, want %q", tc.mode, got, tc.want)
		}
	}
}
