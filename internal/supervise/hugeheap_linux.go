package supervise

import (
	"bytes"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// Where the kernel says how it gives transparent huge pages and how it
// commits memory.
const (
	thpEnabledFile = "/sys/kernel/mm/transparent_hugepage/enabled"
	overcommitFile = "/proc/sys/vm/overcommit_memory"
)

// madvHugepage is MADV_HUGEPAGE (package syscall does not name it).
const madvHugepage = 14

// hugeHeap asks the kernel for huge pages under the heap the child is
// about to use (hugeHeapSize says when and how much). The Go runtime maps
// its heap without asking for them, so on a kernel that gives them only
// where asked (transparent_hugepage "madvise", Debian's and Ubuntu's
// default) every 4 KiB of heap is a page fault when first written; a check
// writes ~150 MiB of heap on the 9,020-object bench render, some 40,000
// faults. One large allocation grows the heap by size in one mapping; it
// is marked for huge pages and freed at once (a collection of the heap the
// few packages initialized so far left, well under a millisecond), and the
// runtime, which reuses the lowest free addresses first, puts what the
// run allocates next there. Nothing is written to it here: it costs
// address space, not memory, and what the run does not use stays
// unbacked (the runtime's scavenger returns it in the background).
func hugeHeap() {
	if unsafe.Sizeof(uintptr(0)) < 8 {
		return // 32-bit: 512 MiB of contiguous address space may not be there
	}
	size := hugeHeapSize(os.Getenv(EnvHugePages), readSmall(thpEnabledFile), readSmall(overcommitFile),
		addressSpaceLimited(), os.Getenv("GOMEMLIMIT"), os.Getenv("GODEBUG"), MaxMemory()/10*8)
	if size == 0 || !canMap(size) {
		return
	}
	if beg, end := growHeap(size); beg < end {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, beg, end-beg, madvHugepage)
	}
	runtime.GC() // frees the allocation: its pages are free heap, still marked
}

// growHeap allocates size bytes, which the runtime maps in one piece and
// does not write (fresh memory is zero), and returns the huge pages inside
// them as addresses, which keep nothing alive.
//
//go:noinline
func growHeap(size uintptr) (beg, end uintptr) {
	b := make([]byte, size)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return (p + hugePage - 1) &^ (hugePage - 1), (p + size) &^ (hugePage - 1)
}

// canMap asks the kernel for a private writable mapping of size bytes and
// gives it back: where it refuses one (ulimit -d, a machine with less
// memory than size under the heuristic overcommit), the runtime's own
// request for the reservation would be a fatal "out of memory" before the
// crash report is armed, exit 2.
func canMap(size uintptr) bool {
	b, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return false
	}
	return syscall.Munmap(b) == nil
}

// readSmall is the start of a small file of the kernel's, nil if it
// cannot be read.
func readSmall(name string) []byte {
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 256)
	n, _ := f.Read(b)
	return bytes.TrimSpace(b[:n])
}

// addressSpaceLimited: whether the process's address space is capped
// (ulimit -v), where a large reservation could make the runtime fail an
// allocation later.
func addressSpaceLimited() bool {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &l); err != nil {
		return true
	}
	return l.Cur != ^uint64(0)
}
