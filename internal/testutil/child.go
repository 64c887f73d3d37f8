package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
)

// childEnv tells a test binary run by InChild which mode it runs in.
const childEnv = "KUBECTL_GATE_TEST_CHILD"

// childSays marks the line of the child's output that is run's answer.
const childSays = "kubectl-gate test child says: "

// InChild runs the calling test again in a child process and returns what
// run, called there with mode, returned: for what is the process's own
// (the collector's settings), which a test must not change for the tests
// that share its process. Every call of a test must pass the same run. In
// the child the test ends there, skipped, so its cleanups run.
func InChild(t *testing.T, mode string, run func(mode string) string) string {
	t.Helper()
	if m := os.Getenv(childEnv); m != "" {
		fmt.Println(childSays + strings.ReplaceAll(run(m), "\n", " "))
		t.SkipNow()
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("running %s in a child (%s): %v\n%s%s", t.Name(), mode, err, out, exit.Stderr)
		}
		t.Fatalf("running %s in a child (%s): %v", t.Name(), mode, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if s, ok := strings.CutPrefix(line, childSays); ok {
			return s
		}
	}
	t.Fatalf("running %s in a child (%s): it said nothing:\n%s", t.Name(), mode, out)
	return ""
}

// RaisesFloor holds that do raises the heap floor from gcfloor.DefaultFloor
// to want, and sets none where the user's GOGC left the process without
// one. In a child process each (InChild): the floor is the process's.
func RaisesFloor(t *testing.T, want uint64, do func() error) {
	t.Helper()
	run := func(mode string) string {
		if mode == "floor" {
			gcfloor.Start(gcfloor.DefaultFloor)
		}
		before := gcfloor.Floor()
		if err := do(); err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%d→%d", before, gcfloor.Floor())
	}
	for _, tc := range []struct{ mode, want string }{
		{"floor", fmt.Sprintf("%d→%d", gcfloor.DefaultFloor, want)},
		{"none", "0→0"},
	} {
		if got := InChild(t, tc.mode, run); got != tc.want {
			t.Errorf("%s: the floor went %s, want %s", tc.mode, got, tc.want)
		}
	}
}
