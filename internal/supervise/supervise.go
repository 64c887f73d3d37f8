// Package supervise is the last line of the fail-closed contract: a crash
// Go cannot recover from (out of memory, a stack overflow from a template
// that includes itself) exits 2 from inside the runtime, the code for a
// usage error. So each binary runs itself again as a child under a small
// parent that maps such an end to exit 3 (no verdict):
//
//   - the child's fatal crash report (runtime/debug.SetCrashOutput, armed
//     by package supervise/child) goes to a pipe the parent reads: any
//     report there is exit 3;
//   - a child killed by a signal (the kernel's OOM killer) is exit 3;
//   - the parent polls the child's resident memory (Linux) and kills it
//     past $KUBECTL_GATE_MAX_MEMORY bytes (default DefaultMaxMemory):
//     exit 3 naming the cap. The child's Go memory limit is set below the
//     cap, so its collector works harder before that.
//
// The child's heap is given huge pages where the kernel gives them only
// on request (hugeHeap; KUBECTL_GATE_HUGEPAGES=off keeps the default).
//
// Signals the parent receives are forwarded; the child is in its own
// process group unless stdin is a terminal (it would then stop on reading
// it), and dies with the parent (Linux).
//
// The binaries call Run from a package initializer (cmd/*/supervised),
// so the parent does not pay the start-up of the packages only the child
// uses: the Go specification initializes the packages in the order of
// their import paths, each as soon as its imports are, so Run comes before
// most of them only while this package imports few and early ones. It
// therefore imports a handful of standard library packages (no os/exec, no
// runtime/debug, no golang.org/x/term: TestFewImports), and the child's
// own set-up is in package supervise/child.
package supervise

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// Env names the variables the supervision reads. The parent starts the
// child with EnvChild set and with its collector off (GOGC=off) while the
// child's packages are initialized (some 17 MB allocated and kept; about a
// quarter of the start-up's CPU went to collections that freed little);
// EnvUserGOGC carries the GOGC the user set, if any, for package
// supervise/child to restore.
const (
	EnvChild     = "KUBECTL_GATE_SUPERVISED"
	EnvUserGOGC  = "KUBECTL_GATE_USER_GOGC"
	EnvCrashPipe = "KUBECTL_GATE_CRASH_PIPE" // set when the pipe is at CrashFD
	EnvMaxMemory = "KUBECTL_GATE_MAX_MEMORY"
)

// NoVerdict is the exit code of a run that reached no verdict (README
// "Exit codes"), the code both binaries give a crash, a kill or the cap.
const NoVerdict = 3

// DefaultMaxMemory is the resident-memory cap without $KUBECTL_GATE_MAX_MEMORY.
const DefaultMaxMemory = 8 << 30

// CrashFD is the child's descriptor of the crash-report pipe.
const CrashFD = 3

// crashPipe: whether the child gets the crash-report pipe. Windows passes
// a child no descriptor beyond the standard three (os.StartProcess refuses
// more; with the pipe every run there was exit 3 before it began): there a
// fatal runtime error keeps the runtime's exit 2, while a kill is still
// exit 3.
var crashPipe = runtime.GOOS != "windows"

// Child reports whether this process is the supervised child.
func Child() bool { return os.Getenv(EnvChild) != "" }

// Run returns at once in the child; in the parent it runs the child and
// exits with its code, or with noVerdict for a crash, a kill or the memory
// cap. name prefixes messages.
func Run(name string, noVerdict int) {
	if Child() {
		hugeHeap()
		return
	}
	os.Exit(parent(name, noVerdict, MaxMemory()))
}

// MaxMemory is the resident-memory cap in bytes.
func MaxMemory() int64 {
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
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	var r, w *os.File
	if crashPipe {
		if r, w, err = os.Pipe(); err != nil {
			return child(name, noVerdict, err)
		}
		files = append(files, w) // at CrashFD
	}
	tty := isTerminal(os.Stdin)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	env := childEnv(os.Environ())
	if crashPipe {
		env = append(env, EnvCrashPipe+"=1")
	}
	proc, err := os.StartProcess(self, os.Args, &os.ProcAttr{
		Env:   env,
		Files: files,
		Sys:   sysProcAttr(!tty),
	})
	if err != nil {
		return child(name, noVerdict, err)
	}
	crash := make(chan string, 1)
	if crashPipe {
		_ = w.Close()
		go func() { crash <- firstLine(r) }()
	} else {
		crash <- ""
	}
	type ended struct {
		st  *os.ProcessState
		err error
	}
	done := make(chan ended, 1)
	go func() {
		st, err := proc.Wait()
		done <- ended{st, err}
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	over := false
	for {
		select {
		case s := <-sigs:
			// From a terminal the child got SIGINT with its group already.
			if !(tty && s == syscall.SIGINT) {
				_ = proc.Signal(s)
			}
		case <-tick.C:
			if rss(proc.Pid) > max && !over {
				over = true
				_ = proc.Kill()
			}
		case e := <-done:
			return verdict(name, noVerdict, max, over, e.st, e.err, <-crash)
		}
	}
}

// childEnv is the parent's environment with the child's variables: the
// runtime reads the first GOGC it finds (os.StartProcess, unlike os/exec,
// does not drop earlier duplicates), so the user's is moved, not shadowed.
func childEnv(environ []string) []string {
	env := make([]string, 0, len(environ)+3)
	for _, kv := range environ {
		switch {
		case hasPrefix(kv, "GOGC="):
			env = append(env, EnvUserGOGC+"="+kv[len("GOGC="):])
		case hasPrefix(kv, EnvChild+"="), hasPrefix(kv, EnvUserGOGC+"="), hasPrefix(kv, EnvCrashPipe+"="):
		default:
			env = append(env, kv)
		}
	}
	return append(env, EnvChild+"=1", "GOGC=off")
}

// hasPrefix is strings.HasPrefix (package strings is initialized late).
func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// verdict maps how the child ended to the exit code.
func verdict(name string, noVerdict int, max int64, over bool, st *os.ProcessState, err error, crash string) int {
	switch {
	case over:
		fmt.Fprintf(os.Stderr, "%s: NO VERDICT: the run used more than %d bytes of memory (the cap; %s sets it)\n", name, max, EnvMaxMemory)
	case crash != "":
		fmt.Fprintf(os.Stderr, "%s: NO VERDICT: the gate crashed: %s\n", name, crash)
	case err == nil && st != nil && st.Exited():
		return st.ExitCode()
	default:
		why := err
		if why == nil && st != nil {
			why = fmt.Errorf("%s", st)
		}
		fmt.Fprintf(os.Stderr, "%s: NO VERDICT: the gate was killed (%v)\n", name, why)
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
	for _, known := range []string{"out of memory", "cannot allocate memory", "stack exceeds", "stack overflow"} {
		if bytes.Contains(b, []byte(known)) {
			return "a fatal runtime error (" + known + ")"
		}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return ""
	}
	// The runtime prints "fatal error: stack overflow" before it turns to
	// the crash output; the report it sends starts with the stack of the
	// throw, in the runtime's stack growth.
	if head := b[:min(len(b), 1024)]; bytes.Contains(head, []byte("runtime.throw(")) && bytes.Contains(head, []byte("runtime.newstack(")) {
		return "a fatal runtime error (stack overflow)"
	}
	return "a fatal runtime error, such as running out of memory or stack (its report is above)"
}
