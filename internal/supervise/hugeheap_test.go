package supervise

import "testing"

// TestHugeHeapSize: when the child asks for a huge heap, and how much.
func TestHugeHeapSize(t *testing.T) {
	madvise := "always [madvise] never"
	for _, c := range []struct {
		name       string
		env        string
		thp        string
		overcommit string
		asLimited  bool
		gomemlimit string
		godebug    string
		limit      int64
		want       uintptr
	}{
		{name: "madvise", thp: madvise, overcommit: "0", want: hugeHeapBytes},
		{name: "heuristic overcommit too", thp: madvise, overcommit: "1", want: hugeHeapBytes},
		{name: "any other value of the variable", env: "on", thp: madvise, overcommit: "0", want: hugeHeapBytes},
		{name: "off", env: "off", thp: madvise, overcommit: "0"},
		{name: "0", env: "0", thp: madvise, overcommit: "0"},
		{name: "false", env: "false", thp: madvise, overcommit: "0"},
		{name: "always: the kernel gives them anyway", thp: "[always] madvise never", overcommit: "0"},
		{name: "never", thp: "always madvise [never]", overcommit: "0"},
		{name: "no THP in this kernel", overcommit: "0"},
		{name: "strict commit", thp: madvise, overcommit: "2"},
		{name: "overcommit unreadable", thp: madvise},
		{name: "overcommit unknown", thp: madvise, overcommit: "3"},
		{name: "ulimit -v", thp: madvise, overcommit: "0", asLimited: true},
		{name: "GODEBUG disablethp=1", thp: madvise, overcommit: "0", godebug: "madvdontneed=1,disablethp=1", want: 0},
		{name: "GODEBUG disablethp=1 then 0: the last wins", thp: madvise, overcommit: "0", godebug: "disablethp=1,disablethp=0", want: hugeHeapBytes},
		{name: "GODEBUG without disablethp", thp: madvise, overcommit: "0", godebug: "gctrace=1", want: hugeHeapBytes},
		{name: "GOMEMLIMIT off", thp: madvise, overcommit: "0", gomemlimit: "off", want: hugeHeapBytes},
		{name: "GOMEMLIMIT high", thp: madvise, overcommit: "0", gomemlimit: "8GiB", want: hugeHeapBytes},
		{name: "GOMEMLIMIT a quarter", thp: madvise, overcommit: "0", gomemlimit: "1GiB", want: 256 << 20},
		{name: "GOMEMLIMIT in bytes, rounded to huge pages", thp: madvise, overcommit: "0", gomemlimit: "1000000000", want: 238 << 20},
		{name: "GOMEMLIMIT B", thp: madvise, overcommit: "0", gomemlimit: "1073741824B", want: 256 << 20},
		{name: "GOMEMLIMIT MiB", thp: madvise, overcommit: "0", gomemlimit: "400MiB", want: 100 << 20},
		{name: "GOMEMLIMIT too low to matter", thp: madvise, overcommit: "0", gomemlimit: "100MiB"},
		{name: "GOMEMLIMIT unreadable", thp: madvise, overcommit: "0", gomemlimit: "1GB"},
		{name: "GOMEMLIMIT overflowing", thp: madvise, overcommit: "0", gomemlimit: "99999999999TiB"},
		{name: "GOMEMLIMIT negative", thp: madvise, overcommit: "0", gomemlimit: "-1"},
		{name: "the default cap's limit", thp: madvise, overcommit: "0", limit: DefaultMaxMemory / 10 * 8, want: hugeHeapBytes},
		{name: "a lower cap's limit: a quarter", thp: madvise, overcommit: "0", limit: 1 << 30, want: 256 << 20},
		{name: "a cap too low to matter", thp: madvise, overcommit: "0", limit: 120000000},
		{name: "the lower of GOMEMLIMIT and the cap", thp: madvise, overcommit: "0", gomemlimit: "2GiB", limit: 1 << 30, want: 256 << 20},
	} {
		if got := hugeHeapSize(c.env, []byte(c.thp), []byte(c.overcommit), c.asLimited, c.gomemlimit, c.godebug, c.limit); got != c.want {
			t.Errorf("%s: %d MiB, want %d MiB", c.name, got>>20, c.want>>20)
		}
	}
}
