//go:build !unix

package resolve

// oNoFollow is 0 where O_NOFOLLOW does not exist; the regular-file check
// after opening still applies.
const oNoFollow = 0

// oNonBlock keeps opening a FIFO planted in place of an entry from waiting
// for a writer.
const oNonBlock = 0
