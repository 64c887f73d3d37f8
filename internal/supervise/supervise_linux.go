package supervise

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// sysProcAttr puts the child in its own process group (group) and kills
// it when the parent dies.
func sysProcAttr(group bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: group, Pdeathsig: syscall.SIGKILL}
}

// rss is the resident memory of a process in bytes (/proc/PID/statm), 0
// when unknown.
func rss(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(string(f[1]), 10, 64)
	return pages * int64(os.Getpagesize())
}

// isTerminal asks the terminal driver (the TCGETS ioctl, as
// golang.org/x/term does), not the file mode: /dev/null is a character
// device too, and a run with stdin from /dev/null (CI, a test,
// `cmd </dev/null`) must have its SIGINT forwarded.
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
