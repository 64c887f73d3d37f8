//go:build !linux

package supervise

import "syscall"

func sysProcAttr(group bool) *syscall.SysProcAttr { return nil }

// rss is unknown here: the memory cap is not enforced, the crash mapping is.
func rss(pid int) int64 { return 0 }
