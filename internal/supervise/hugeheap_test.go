package supervise

import "testing"

// TestHugeHeapSize: when the child asks for a huge heap, and how much.
func TestHugeHeapSize(t *testing.T) {
	madvise := []byte("always [madvise] never")
	for _, c := range []struct {
		name       string
		env        string
		thp        string
		overcommit string
		asLimited  bool
		gomemlimit string
		want       uintptr
	}{
		{"madvise", "", string(madvise), "0", false, "", hugeHeapBytes},
		{"heuristic overcommit too", "", string(madvise), "1", false, "", hugeHeapBytes},
		{"any other value of the variable", "on", string(madvise), "0", false, "", hugeHeapBytes},
		{"off", "off", string(madvise), "0", false, "", 0},
		{"0", "0", string(madvise), "0", false, "", 0},
		{"false", "false", string(madvise), "0", false, "", 0},
		{"always: the kernel gives them anyway", "", "[always] madvise never", "0", false, "", 0},
		{"never", "", "always madvise [never]", "0", false, "", 0},
		{"no THP in this kernel", "", "", "0", false, "", 0},
		{"strict commit", "", string(madvise), "2", false, "", 0},
		{"ulimit -v", "", string(madvise), "0", true, "", 0},
		{"GOMEMLIMIT off", "", string(madvise), "0", false, "off", hugeHeapBytes},
		{"GOMEMLIMIT high", "", string(madvise), "0", false, "8GiB", hugeHeapBytes},
		{"GOMEMLIMIT a quarter", "", string(madvise), "0", false, "1GiB", 256 << 20},
		{"GOMEMLIMIT in bytes, rounded to huge pages", "", string(madvise), "0", false, "1000000000", 238 << 20},
		{"GOMEMLIMIT B", "", string(madvise), "0", false, "1073741824B", 256 << 20},
		{"GOMEMLIMIT MiB", "", string(madvise), "0", false, "400MiB", 100 << 20},
		{"GOMEMLIMIT too low to matter", "", string(madvise), "0", false, "100MiB", 0},
		{"GOMEMLIMIT unreadable", "", string(madvise), "0", false, "1GB", 0},
		{"GOMEMLIMIT overflowing", "", string(madvise), "0", false, "99999999999TiB", 0},
		{"GOMEMLIMIT negative", "", string(madvise), "0", false, "-1", 0},
	} {
		if got := hugeHeapSize(c.env, []byte(c.thp), []byte(c.overcommit), c.asLimited, c.gomemlimit); got != c.want {
			t.Errorf("%s: %d MiB, want %d MiB", c.name, got>>20, c.want>>20)
		}
	}
}
