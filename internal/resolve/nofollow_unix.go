//go:build unix

package resolve

import "syscall"

// oNoFollow keeps a cache read from following a symbolic link planted in
// place of an entry.
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock keeps opening a FIFO planted in place of an entry from waiting
// for a writer.
const oNonBlock = syscall.O_NONBLOCK
