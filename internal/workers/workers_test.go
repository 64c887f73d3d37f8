package workers

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// Each runs every index once, on more than one goroutine when it can;
// stops taking indexes once fn says stop; and raises the panic of the
// lowest index in the caller, after the other workers are done.
func TestEach(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, 3, 1000} {
		runs := make([]atomic.Int32, n)
		Each(n, func(i int) bool {
			runs[i].Add(1)
			return true
		})
		for i := range runs {
			if r := runs[i].Load(); r != 1 {
				t.Fatalf("n=%d: index %d ran %d times", n, i, r)
			}
		}
	}
	var taken atomic.Int32
	Each(1000, func(i int) bool {
		taken.Add(1)
		return i < 10
	})
	if n := taken.Load(); n < 11 || n > 10+4 {
		t.Errorf("stopped at index 10: %d indexes taken, want 11 plus at most one a worker", n)
	}
	var done atomic.Int32
	func() {
		defer func() {
			if p := recover(); p != 200 {
				t.Errorf("recovered %v, want the panic of index 200 (the lowest)", p)
			}
		}()
		Each(1000, func(i int) bool {
			if i == 200 || i == 700 {
				panic(i)
			}
			done.Add(1)
			return true
		})
	}()
	if done.Load() < 990 {
		t.Errorf("only %d indexes ran besides the two that panicked: the other workers did not finish", done.Load())
	}
}

func TestRanges(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range []struct{ n, size int }{{0, 10}, {1, 10}, {10, 10}, {11, 10}, {1000, 7}, {5, 0}} {
		seen := make([]atomic.Int32, tc.n)
		Ranges(tc.n, tc.size, func(lo, hi int) {
			if hi <= lo || hi-lo > max(tc.size, 1) {
				t.Errorf("n=%d size=%d: range [%d, %d)", tc.n, tc.size, lo, hi)
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			if s := seen[i].Load(); s != 1 {
				t.Fatalf("n=%d size=%d: index %d seen %d times", tc.n, tc.size, i, s)
			}
		}
	}
}
