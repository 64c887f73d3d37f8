//go:build !linux

package supervise

// hugeHeap: huge pages are asked for on Linux only.
func hugeHeap() {}
