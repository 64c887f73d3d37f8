//go:build !unix

package fsbound

// oNonBlock is 0 where O_NONBLOCK does not exist; the regular-file check
// after opening still applies.
const oNonBlock = 0
