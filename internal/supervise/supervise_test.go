package supervise

import (
	"os"
	"testing"
)

// TestDevNullIsNotATerminal: /dev/null is a character device, and a run
// whose stdin is /dev/null (CI, tests, `cmd </dev/null`) was taken for a
// terminal, so the parent never forwarded SIGINT and the run went on to
// its deadline.
func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatal("/dev/null taken for a terminal: SIGINT would not be forwarded")
	}
}
