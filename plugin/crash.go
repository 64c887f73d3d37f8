package plugin

import (
	"fmt"
	"slices"

	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// debugFlag, anywhere on the command line, prints the stack of a crash.
const debugFlag = "--debug"

// PanicError is a crash inside the gate (internal/stop).
type PanicError = stop.PanicError

// crashReport writes the one-line report of a crash, and its stack with
// --debug, and returns exit 3.
func crashReport(s Streams, err *PanicError, withStack bool) int {
	fmt.Fprintf(s.Err, "kubectl gate: NO VERDICT: %v (a bug: please report it; --debug prints the stack)\n", err)
	if withStack {
		_, _ = s.Err.Write(err.Stack)
	}
	return ExitNoVerdict
}

// takeDebug removes --debug from args.
func takeDebug(args []string) ([]string, bool) {
	i := slices.Index(args, debugFlag)
	if i < 0 {
		return args, false
	}
	return slices.Delete(slices.Clone(args), i, i+1), true
}
