//go:build !unix

package external

import "os/exec"

// ownGroup does nothing where there are no process groups: the context
// kills the tool itself, and WaitDelay bounds the wait for its children.
func ownGroup(cmd *exec.Cmd) {}
