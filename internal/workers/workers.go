// Package workers runs the items of a slice on every core: one goroutine
// per core takes the next item in turn, and a panic reaches the caller.
//
// A goroutine per item, the simpler shape, starts each item on a fresh
// stack: validating one Kubernetes object grows a stack to tens of
// kilobytes, and copying stacks as they grew was 5% of a check's CPU. A
// few long-lived workers grow theirs once.
package workers

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls fn(0) … fn(n-1), at most GOMAXPROCS at a time, each worker
// taking the lowest index not yet taken. fn returns false to stop: no
// worker takes another index (those taken finish).
//
// A panic in fn ends its worker and is raised again in the caller's
// goroutine once the others are done, the panic of the lowest index, as
// a loop in order would have raised it first: a rule's panic stays the
// rule's (rules.Run catches it there).
func Each(n int, fn func(i int) bool) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			if !fn(i) {
				return
			}
		}
		return
	}
	type panicked struct {
		index int
		value any
	}
	panics := make([]*panicked, workers)
	var next atomic.Int64
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			i := -1
			defer func() {
				if p := recover(); p != nil {
					panics[w] = &panicked{i, p}
				}
			}()
			for !stopped.Load() {
				if i = int(next.Add(1) - 1); i >= n {
					return
				}
				if !fn(i) {
					stopped.Store(true)
				}
			}
		})
	}
	wg.Wait()
	var first *panicked
	for _, p := range panics {
		if p != nil && (first == nil || p.index < first.index) {
			first = p
		}
	}
	if first != nil {
		panic(first.value)
	}
}

// RangeSize is how many objects of a render one worker of a pass over it
// takes at a time (Ranges): a render no larger is passed over in place.
const RangeSize = 1024

// Ranges calls fn over [lo, hi) ranges that cover 0 … n-1 once, of at most
// size items each, on every core (Each): a pass over every object of a
// large render that only reads (counting, finding duplicates) takes a
// cache miss or more per object it reads, long after the objects were
// parsed, and is spread over the cores instead of one.
func Ranges(n, size int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	size = max(size, 1)
	Each((n-1)/size+1, func(i int) bool {
		fn(i*size, min((i+1)*size, n))
		return true
	})
}
