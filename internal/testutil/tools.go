package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// Tool returns the path of an external tool: the environment variable env
// when set (the Makefile sets KUSTOMIZE and KUSTOMIZE_OLD), else name on
// PATH. A missing tool skips the test, or fails it when GATE_REQUIRE_TOOLS
// is set (as `make test` does), so CI cannot pass by skipping.
func Tool(t testing.TB, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil && env != "KUSTOMIZE_OLD" {
		return p
	}
	msg := name + " not found: set " + env + " or put it on PATH (make tools installs it)"
	if os.Getenv("GATE_REQUIRE_TOOLS") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Result is what a command did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs a command in dir with stdin and extra environment, and returns
// its exit code and output. A command that cannot start fails the test.
func Run(t testing.TB, dir, stdin string, env []string, name string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewBufferString(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s %v: %v", name, args, err)
	}
	return r
}
