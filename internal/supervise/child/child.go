// Package child is the supervised child's side of package supervise: its
// fatal crash report goes to the pipe the parent reads, and its Go memory
// limit is set below the parent's cap. It is apart from package supervise
// so that the parent, which runs from a package initializer, does not wait
// for runtime/debug to be initialized.
package child

import (
	"os"
	"runtime/debug"
	"strconv"

	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
	"github.com/kubectl-gate/kubectl-gate/internal/supervise"
)

// Arm sets the child up; outside a supervised child it does nothing. Call
// it first in main. It turns the collector back on (the parent starts the
// child with it off, for the packages' initialization), as the user's GOGC
// says, and leaves the environment as the user gave it to what the child
// runs in turn (Helm, kustomize, policy engines; a gate-fn that kustomize
// runs supervises itself).
func Arm() {
	if !supervise.Child() {
		return
	}
	pipe := os.Getenv(supervise.EnvCrashPipe) != ""
	gogc, set := os.LookupEnv(supervise.EnvUserGOGC)
	// Below the cap, so the collector works harder before the parent
	// kills; a lower GOMEMLIMIT the user set is kept. Set before the
	// floor, which is capped by it (gcfloor.Capped).
	if limit := supervise.MaxMemory() / 10 * 8; debug.SetMemoryLimit(-1) > limit {
		debug.SetMemoryLimit(limit)
	}
	if set {
		debug.SetGCPercent(gcPercent(gogc))
		_ = os.Setenv("GOGC", gogc)
	} else {
		// The collector waits for the heap floor (package gcfloor); it
		// is off until then, not at GOGC=100 over a heap that start-up
		// filled.
		gcfloor.Start(gcfloor.DefaultFloor)
		_ = os.Unsetenv("GOGC")
	}
	_ = os.Unsetenv(supervise.EnvUserGOGC)
	_ = os.Unsetenv(supervise.EnvChild)
	_ = os.Unsetenv(supervise.EnvCrashPipe)
	// The pipe only where the parent said it passed one: elsewhere (Windows)
	// CrashFD is no descriptor of the parent's.
	if pipe {
		if f := os.NewFile(supervise.CrashFD, "crash"); f != nil {
			if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
				_ = debug.SetCrashOutput(f, debug.CrashOptions{})
			}
			_ = f.Close()
		}
	}
}

// gcPercent reads GOGC as the runtime does: "off" is -1, an integer is
// itself, anything else (unset included) is the default, 100.
func gcPercent(gogc string) int {
	if gogc == "off" {
		return -1
	}
	if n, err := strconv.Atoi(gogc); err == nil {
		return n
	}
	return 100
}
