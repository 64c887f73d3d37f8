package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
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
