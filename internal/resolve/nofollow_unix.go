//go:build unix

package resolve

import "syscall"

// oNoFollow keeps a cache read from following a symbolic link planted in
// place of an entry.
const oNoFollow = syscall.O_NOFOLLOW
