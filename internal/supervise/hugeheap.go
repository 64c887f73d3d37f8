package supervise

import (
	"bytes"
	"strconv"
)

// EnvHugePages set to "off" (or "0", "false") keeps the child's heap in
// the kernel's default pages (hugeHeap).
const EnvHugePages = "KUBECTL_GATE_HUGEPAGES"

const (
	// hugeHeapBytes is the heap marked for huge pages: more than the
	// 9,020-object bench render's check uses (~150 MiB of heap); past it
	// the heap grows in default pages, as without.
	hugeHeapBytes = 512 << 20
	// hugePage is the size of a transparent huge page on amd64 and arm64
	// with 4 KiB pages.
	hugePage = 2 << 20
	// minHugeHeap: below it a reservation is not worth a collection.
	minHugeHeap = 32 << 20
)

// hugeHeapSize is the heap hugeHeap marks for huge pages, 0 for none:
// none when the user says off (env, or GODEBUG's disablethp=1, which asks
// the runtime for no huge pages), when the kernel gives huge pages only
// where asked is not what thp says (enabled: "always" gives them anyway,
// "never" not at all), when its overcommit policy is not known to be a
// heuristic one (overcommit "0" or "1"; "2" counts the reservation
// against the commit limit) or the address space is capped; at most a
// quarter of a GOMEMLIMIT the user set (the freed reservation is counted
// as the heap's until the scavenger returns it; an unreadable one: none)
// and of the child's own Go memory limit (limit, bytes). hugeHeap also
// asks the kernel for the mapping first (canMap).
func hugeHeapSize(env string, thp, overcommit []byte, asLimited bool, gomemlimit, godebug string, limit int64) uintptr {
	switch env {
	case "off", "0", "false":
		return 0
	}
	if !bytes.Contains(thp, []byte("[madvise]")) || asLimited || disableTHP(godebug) {
		return 0
	}
	if o := string(overcommit); o != "0" && o != "1" {
		return 0
	}
	size := uint64(hugeHeapBytes)
	if gomemlimit != "" {
		l, ok := memoryLimit(gomemlimit)
		if !ok {
			return 0
		}
		size = min(size, l/4)
	}
	if limit > 0 {
		size = min(size, uint64(limit)/4)
	}
	size &^= hugePage - 1
	if size < minHugeHeap {
		return 0
	}
	return uintptr(size)
}

// disableTHP: whether GODEBUG's last disablethp setting is 1.
func disableTHP(godebug string) bool {
	on := false
	for len(godebug) > 0 {
		kv := godebug
		if i := indexByte(godebug, ','); i >= 0 {
			kv, godebug = godebug[:i], godebug[i+1:]
		} else {
			godebug = ""
		}
		if hasPrefix(kv, "disablethp=") {
			on = kv == "disablethp=1"
		}
	}
	return on
}

// indexByte is strings.IndexByte (package strings is initialized late).
func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// memoryLimit reads GOMEMLIMIT as the runtime does: "off", or a count of
// bytes with an optional unit (B, KiB, MiB, GiB, TiB).
func memoryLimit(s string) (uint64, bool) {
	if s == "off" {
		return 1<<63 - 1, true
	}
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if len(s) > len(u.suffix) && s[len(s)-len(u.suffix):] == u.suffix {
			s, mult = s[:len(s)-len(u.suffix)], u.mult
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > (1<<63-1)/mult {
		return 0, false
	}
	return n * mult, true
}
