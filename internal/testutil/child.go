package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv tells a test binary run by InChild which mode it runs in.
const childEnv = "KUBECTL_GATE_TEST_CHILD"

// InChild runs the calling test again in a child process and returns what
// run, called there with mode, returned: for what is the process's own
// (the collector's settings), which a test must not change for the tests
// that share its process. Every call of a test must pass the same run.
func InChild(t *testing.T, mode string, run func(mode string) string) string {
	t.Helper()
	if m := os.Getenv(childEnv); m != "" {
		fmt.Print(run(m))
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running %s in a child (%s): %v\n%s", t.Name(), mode, err, out)
	}
	return strings.TrimSpace(string(out))
}
