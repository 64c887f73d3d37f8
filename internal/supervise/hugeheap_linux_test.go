package supervise

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// envHugeHeapProbe makes this test binary the probe TestHugeHeap runs.
const envHugeHeapProbe = "GATE_TEST_HUGEHEAP_PROBE"

// TestHugeHeap runs this test binary as a child that calls hugeHeap as the
// supervised child does, then allocates and writes 64 MiB, as a check's
// heap grows: the mapping that holds it must be marked for huge pages
// (smaps' VmFlags "hg"), and must not be with KUBECTL_GATE_HUGEPAGES=off.
// Seen failing with the madvise call removed. Whether the kernel then
// backs it with huge pages (AnonHugePages) depends on its free memory, so
// that is logged, not asserted.
func TestHugeHeap(t *testing.T) {
	if hugeHeapSize("", readSmall(thpEnabledFile), readSmall(overcommitFile), addressSpaceLimited(), "", "", 0) == 0 || !canMap(hugeHeapBytes) {
		t.Skipf("this kernel or process asks for no huge heap (transparent_hugepage %q, overcommit %q)",
			readSmall(thpEnabledFile), readSmall(overcommitFile))
	}
	for _, c := range []struct {
		env  string
		want bool
	}{{"", true}, {"off", false}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHugeHeapProbe$", "-test.v")
		// Not the GOMEMLIMIT, GODEBUG or memory cap this test runs
		// under: they may shrink the reservation below the probe's 64 MiB.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GODEBUG=") && !strings.HasPrefix(kv, EnvMaxMemory+"=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, envHugeHeapProbe+"=1", EnvHugePages+"="+c.env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s=%q: probe: %v\n%s", EnvHugePages, c.env, err, out)
		}
		var flags, huge string
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "probe: "); ok {
				flags, huge, _ = strings.Cut(v, " ")
			}
		}
		t.Logf("%s=%q: VmFlags %q, AnonHugePages %s", EnvHugePages, c.env, flags, huge)
		if got := strings.Contains(","+flags+",", ",hg,"); got != c.want {
			t.Errorf("%s=%q: heap marked for huge pages %v, want %v (VmFlags %q)\n%s", EnvHugePages, c.env, got, c.want, flags, out)
		}
	}
}

// TestHugeHeapProbe is TestHugeHeap's child; it does nothing otherwise.
func TestHugeHeapProbe(t *testing.T) {
	if os.Getenv(envHugeHeapProbe) == "" {
		t.Skip("run by TestHugeHeap")
	}
	hugeHeap()
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	flags, huge, err := mappingOf(uintptr(unsafe.Pointer(&b[len(b)/2])))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("probe: %s %s\n", strings.ReplaceAll(flags, " ", ","), huge)
}

// mappingOf reads /proc/self/smaps for the mapping that holds addr: its
// VmFlags and its AnonHugePages.
func mappingOf(addr uintptr) (flags, huge string, err error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, _ := strings.Cut(fields[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= l && uint64(addr) < h
			continue
		}
		if !in {
			continue
		}
		if v, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			huge = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			return strings.TrimSpace(v), huge, nil
		}
	}
	if err := s.Err(); err != nil {
		return "", "", err
	}
	return "", "", fmt.Errorf("no mapping in /proc/self/smaps holds %#x", addr)
}
