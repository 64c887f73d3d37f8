package supervise

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
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

// TestChildMemoryLimit: the child's Go memory limit is 80% of the cap, and
// a lower GOMEMLIMIT the user set (a container's budget) is kept, not
// raised to it.
func TestChildMemoryLimit(t *testing.T) {
	if os.Getenv("SUPERVISE_TEST_CHILD") != "" {
		Run("test", 3)
		fmt.Println(debug.SetMemoryLimit(-1))
		return
	}
	for _, tc := range []struct {
		gomemlimit string
		want       int64
	}{
		{"", 800_000_000},
		{"100MiB", 100 << 20},
		{"2GiB", 800_000_000},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildMemoryLimit$")
		cmd.Env = append(os.Environ(), "SUPERVISE_TEST_CHILD=1", envChild+"=1", EnvMaxMemory+"=1000000000", "GOMEMLIMIT="+tc.gomemlimit)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOMEMLIMIT=%q: child: %v", tc.gomemlimit, err)
		}
		got, err := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
		if err != nil {
			t.Fatalf("GOMEMLIMIT=%q: child printed %q", tc.gomemlimit, out)
		}
		if got != tc.want {
			t.Errorf("GOMEMLIMIT=%q: the child's memory limit is %d, want %d", tc.gomemlimit, got, tc.want)
		}
	}
}
