package supervise_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/supervise"
	"github.com/kubectl-gate/kubectl-gate/internal/supervise/child"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestWithoutCrashPipe starts the child as Windows must, with only the
// standard three descriptors (with a fourth, os.StartProcess refused and
// every run there was exit 3 before it began): the child's own exit code
// passes through, a kill is still exit 3, and the child arms no crash
// output on a descriptor it was not given, so a fatal runtime error keeps
// the runtime's exit 2 there.
func TestWithoutCrashPipe(t *testing.T) {
	if mode := os.Getenv("SUPERVISE_TEST_NOPIPE"); mode != "" {
		supervise.WithoutCrashPipe()
		supervise.Run("test", supervise.NoVerdict) // the parent exits here
		child.Arm()
		switch mode {
		case "exit7":
			os.Exit(7)
		case "kill":
			if self, err := os.FindProcess(os.Getpid()); err == nil {
				_ = self.Kill()
			}
			select {}
		case "fatal":
			m := map[int]int{}
			go func() {
				for i := 0; ; i++ {
					m[i] = i
				}
			}()
			for i := 0; ; i++ {
				m[i] = i // concurrent map writes: a fatal runtime error
			}
		}
		return
	}
	for _, tc := range []struct {
		mode string
		code int
		says string
	}{
		{"exit7", 7, ""},
		{"kill", 3, "test: NO VERDICT: the gate was killed (signal: killed)"},
		{"fatal", 2, "fatal error: concurrent map writes"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			code, stderr := testutil.RunSelf(t, "TestWithoutCrashPipe", "SUPERVISE_TEST_NOPIPE="+tc.mode)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr starts:\n%.2000s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.says) {
				t.Errorf("stderr does not say %q:\n%.2000s", tc.says, stderr)
			}
		})
	}
}
