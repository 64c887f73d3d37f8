//go:build unix

package external

import (
	"os/exec"
	"syscall"
)

// ownGroup runs the tool in its own process group and, when the run's
// context ends, kills the whole group: a tool that is a script (or that
// forks) must not leave a child holding its output open, or the run would
// wait for it and the temporary directory would outlive the gate.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
