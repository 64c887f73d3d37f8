//go:build unix

package fsbound

import "syscall"

// oNonBlock keeps opening a FIFO from waiting for a writer.
const oNonBlock = syscall.O_NONBLOCK
