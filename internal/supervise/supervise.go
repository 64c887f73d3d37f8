// Package supervise is the last line of the fail-closed contract: a crash
// Go cannot recover from (out of memory, a stack overflow from a template
// that includes itself) exits 2 from inside the runtime, the code for a
// usage error. So each binary runs itself again as a child under a small
// parent that maps such an end to exit 3 (no verdict):
//
//   - the child's fatal crash report (runtime/debug.SetCrashOutput) goes
//     to a pipe the parent reads: any report there is exit 3;
//   - a child killed by a signal (the kernel's OOM killer) is exit 3;
//   - the parent polls the child's resident memory (Linux) and kills it
//     past $KUBECTL_GATE_MAX_MEMORY bytes (default DefaultMaxMemory):
//     exit 3 naming the cap. The child's Go memory limit is set below the
//     cap, so its collector works harder before that.
//
// Signals the parent receives are forwarded; the child is in its own
// process group unless stdin is a terminal (it would then stop on reading
// it), and dies with the parent (Linux).
package supervise

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

// Env names the variables the supervision reads.
const (
	envChild     = "KUBECTL_GATE_SUPERVISED"
	EnvMaxMemory = "KUBECTL_GATE_MAX_MEMORY"
)

// DefaultMaxMemory is the resident-memory cap without $KUBECTL_GATE_MAX_MEMORY.
const DefaultMaxMemory = 8 << 30

// crashFD is the child's descriptor of the crash-report pipe.
const crashFD = 3

// Run returns at once in the child (after arming its crash report);
// in the parent it runs the child and exits with its code, or with
// noVerdict for a crash, a kill or the memory cap. name prefixes messages.
func Run(name string, noVerdict int) {
	max := maxMemory()
	if os.Getenv(envChild) != "" {
		if f := os.NewFile(crashFD, "crash"); f != nil {
			if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
				_ = debug.SetCrashOutput(f, debug.CrashOptions{})
			}
			_ = f.Close()
		}
		// Below the cap, so the collector works harder before the parent
		// kills; a lower GOMEMLIMIT the user set is kept.
		if limit := max / 10 * 8; debug.SetMemoryLimit(-1) > limit {
			debug.SetMemoryLimit(limit)
		}
		return
	}
	os.Exit(parent(name, noVerdict, max))
}

func maxMemory() int64 {
	if v, err := strconv.ParseInt(os.Getenv(EnvMaxMemory), 10, 64); err == nil && v > 0 {
		return v
	}
	return DefaultMaxMemory
}

func parent(name string, noVerdict int, max int64) int {
	self, err := os.Executable()
	if err != nil {
		return child(name, noVerdict, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return child(name, noVerdict, err)
	}
	cmd := &exec.Cmd{Path: self, Args: os.Args, Env: append(os.Environ(), envChild+"=1"),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, ExtraFiles: []*os.File{w}}
	tty := isTerminal(os.Stdin)
	cmd.SysProcAttr = sysProcAttr(!tty)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		return child(name, noVerdict, err)
	}
	_ = w.Close()
	crash := make(chan string, 1)
	go func() { crash <- firstLine(r) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	over := false
	for {
		select {
		case s := <-sigs:
			// From a terminal the child got SIGINT with its group already.
			if !(tty && s == syscall.SIGINT) {
				_ = cmd.Process.Signal(s)
			}
		case <-tick.C:
			if rss(cmd.Process.Pid) > max && !over {
				over = true
				_ = cmd.Process.Kill()
			}
		case err := <-done:
			return verdict(name, noVerdict, max, over, err, cmd, <-crash)
		}
	}
}

// verdict maps how the child ended to the exit code.
func verdict(name string, noVerdict int, max int64, over bool, err error, cmd *exec.Cmd, crash string) int {
	st := cmd.ProcessState
	switch {
	case over:
		fmt.Fprintf(os.Stderr, "%s: NO VERDICT: the run used more than %d bytes of memory (the cap; %s sets it)\n", name, max, EnvMaxMemory)
	case crash != "":
		fmt.Fprintf(os.Stderr, "%s: NO VERDICT: the gate crashed: %s\n", name, crash)
	case st != nil && st.Exited():
		return st.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "%s: NO VERDICT: the gate was killed (%v)\n", name, err)
	}
	return noVerdict
}

// child reports that the child could not be started and runs nothing.
func child(name string, noVerdict int, err error) int {
	fmt.Fprintf(os.Stderr, "%s: NO VERDICT: starting the supervised run: %v\n", name, err)
	return noVerdict
}

// firstLine names the fatal error of the child's crash report, "" when
// the child wrote none.
func firstLine(r *os.File) string {
	b, _ := io.ReadAll(io.LimitReader(r, 1<<20))
	go func() { _, _ = io.Copy(io.Discard, r) }()
	text := string(b)
	for _, known := range []string{"out of memory", "cannot allocate memory", "stack exceeds", "stack overflow"} {
		if strings.Contains(text, known) {
			return "a fatal runtime error (" + known + ")"
		}
	}
	if strings.TrimSpace(text) == "" {
		return ""
	}
	return "a fatal runtime error, such as running out of memory or stack (its report is above)"
}

// isTerminal asks the terminal driver, not the file mode: /dev/null is a
// character device too, and a run with stdin from /dev/null (CI, a test,
// `cmd </dev/null`) must have its SIGINT forwarded.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}
