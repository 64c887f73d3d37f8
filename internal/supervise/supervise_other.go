//go:build !linux

package supervise

import (
	"os"
	"syscall"

	"golang.org/x/term"
)

func sysProcAttr(group bool) *syscall.SysProcAttr { return nil }

// rss is unknown here: the memory cap is not enforced, the crash mapping is.
func rss(pid int) int64 { return 0 }

// isTerminal asks the terminal driver, not the file mode.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}
