package external

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Result is what a tool said about one policy rule.
type Result string

const (
	// Fail: the rule rejected a resource (error severity).
	Fail Result = "fail"
	// Warning: the rule warned (warning severity).
	Warning Result = "warn"
	// Error: the tool could not evaluate the rule (no verdict).
	Error Result = "error"
	// Unbound: the policy produced no result at all: it checked nothing.
	Unbound Result = "unbound"
)

// Finding is one result of an external tool.
type Finding struct {
	Tool    string // "kyverno" or "conftest"
	Policy  string // Kyverno policy name, or Rego package (namespace)
	Rule    string // Kyverno rule, or the Rego rule kind (deny, violation, warn)
	Result  Result
	Message string
	// Resource names the object when the tool says which one.
	Resource *Resource
}

// Resource identifies a rendered object.
type Resource struct {
	APIVersion, Kind, Namespace, Name string
}

// NoVerdictError: the tool gave no usable answer. Callers map it to exit 3.
type NoVerdictError struct {
	Tool   string
	Reason string // "missing", "crashed", "timed out", "unparseable output"
	Err    error
}

func (e *NoVerdictError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Tool, e.Reason, e.Err)
}

func (e *NoVerdictError) Unwrap() error { return e.Err }

// Options for one tool run.
type Options struct {
	// Path of the tool; empty: look it up on PATH under the tool's names.
	Path string
	// Timeout bounds the run; 0 means 5 minutes.
	Timeout time.Duration
}

// run executes the tool with the rendered stream written to a temporary
// file (added as the last argument by args). okCodes are the exit codes
// with which the tool still produced its report.
func run(ctx context.Context, tool string, names []string, opts Options, render []byte, okCodes []int, args func(renderPath string) []string) (stdout []byte, code int, err error) {
	bin, err := locate(tool, names, opts.Path)
	if err != nil {
		return nil, 0, err
	}
	dir, err := os.MkdirTemp("", "gate-"+tool+"-")
	if err != nil {
		return nil, 0, fmt.Errorf("create a temporary directory for %s: %w", tool, err)
	}
	defer os.RemoveAll(dir)
	renderPath := filepath.Join(dir, "render.yaml")
	if err := os.WriteFile(renderPath, render, 0o600); err != nil {
		return nil, 0, fmt.Errorf("write the render for %s: %w", tool, err)
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args(renderPath)...)
	cmd.Dir = dir
	// The tool's own temporary files go to the directory removed below.
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "HOME="+dir, "TMPDIR="+dir)
	// Once the context ends, the tool's group is killed and the run waits
	// at most waitDelay for its output: the deferred RemoveAll then runs
	// well within the plugin's stop grace, so a --timeout or a signal
	// leaves no copy of the render behind.
	ownGroup(cmd)
	cmd.WaitDelay = waitDelay
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	if parent.Err() != nil {
		// The run was stopped (--timeout, a signal): the tool was killed.
		return nil, 0, &NoVerdictError{Tool: tool, Reason: "stopped", Err: context.Cause(parent)}
	}
	if ctx.Err() == context.DeadlineExceeded {
		return nil, 0, &NoVerdictError{Tool: tool, Reason: "timed out", Err: fmt.Errorf("%s did not finish within %s", bin, timeout)}
	}
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			return nil, 0, &NoVerdictError{Tool: tool, Reason: "crashed", Err: fmt.Errorf("run %s: %w", bin, runErr)}
		}
		code = ee.ExitCode()
		if code < 0 || !contains(okCodes, code) {
			return nil, code, &NoVerdictError{Tool: tool, Reason: "crashed",
				Err: fmt.Errorf("%s exited with %s: %s", bin, ee.ProcessState, excerpt(errb.String(), out.String()))}
		}
	}
	return out.Bytes(), code, nil
}

// waitDelay bounds the wait for a killed tool's output pipes.
const waitDelay = 100 * time.Millisecond

func locate(tool string, names []string, path string) (string, error) {
	if path != "" {
		fi, err := os.Stat(path)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", &NoVerdictError{Tool: tool, Reason: "missing", Err: fmt.Errorf("%s is not an executable file", path)}
		}
		return path, nil
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", &NoVerdictError{Tool: tool, Reason: "missing", Err: fmt.Errorf("none of %s is on PATH (or give --%s PATH)", strings.Join(names, ", "), tool)}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// excerpt is the tail of what a failed tool printed, for the error.
func excerpt(parts ...string) string {
	s := strings.TrimSpace(strings.Join(parts, "\n"))
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	if s == "" {
		return "no output"
	}
	return s
}
