// Package child is the supervised child's side of package supervise: its
// fatal crash report goes to the pipe the parent reads, and its Go memory
// limit is set below the parent's cap. It is apart from package supervise
// so that the parent, which runs from a package initializer, does not wait
// for runtime/debug to be initialized.
package child

import (
	"os"
	"runtime/debug"

	"github.com/kubectl-gate/kubectl-gate/internal/supervise"
)

// Arm sets the child up; outside a supervised child it does nothing. Call
// it first in main.
func Arm() {
	if !supervise.Child() {
		return
	}
	if f := os.NewFile(supervise.CrashFD, "crash"); f != nil {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
			_ = debug.SetCrashOutput(f, debug.CrashOptions{})
		}
		_ = f.Close()
	}
	// Below the cap, so the collector works harder before the parent
	// kills; a lower GOMEMLIMIT the user set is kept.
	if limit := supervise.MaxMemory() / 10 * 8; debug.SetMemoryLimit(-1) > limit {
		debug.SetMemoryLimit(limit)
	}
}
