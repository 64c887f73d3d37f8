// Package gcfloor holds the garbage collector's percentage (GOGC) for the
// whole process: a heap floor below which the collector does not run, and
// pauses while a large stream is read.
//
// The floor: with GOGC=100 the collector runs each time the heap doubles
// its live part. A check reads its render into many small trees and drops
// most of them once checked (the streamed check), so its live heap stays
// small while it allocates several times the render: on the 9,020-object
// bench render the heap was collected eleven times, and the collector's
// marking, its write barriers and the assists it asks of allocating
// goroutines took about a tenth of the run's CPU. With a floor the
// collector lets the heap grow to the floor (at least twice the live heap,
// as GOGC=100 would) before it runs: after every collection the
// percentage is set so that the next one starts there. Once the live heap
// is over half the floor, this is GOGC=100 again, so a large render's peak
// is what it was.
//
// The floor is the memory a run may use whatever it checks; it is set only
// when the user set no GOGC (child.Arm), and a GOMEMLIMIT the user set (or
// the supervisor's, below its cap) still makes the collector run before
// the process reaches it.
//
// The pause: reading a large stream into trees that are all kept, a
// collection marks what it cannot free (stream.pauseGC's measure);
// Pause turns the collector off until the last overlapping read ends, and
// the floor does not turn it back on meanwhile.
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// DefaultFloor is the heap floor child.Arm sets: 128 MiB. On the 9,020-object
// bench render it saved 11–15% of the check's CPU for 4–14 MiB more peak
// memory (paired runs; the heap reached ~140 MiB with GOGC=100 too, at its
// end); 100 MiB saved nothing, 160 MiB cost 28 MiB more for no more saving.
const DefaultFloor = 128 << 20

var state struct {
	sync.Mutex
	floor   uint64 // 0: no floor
	started bool   // the finalizer that follows collections is set
	paused  int    // reads running with the collector off
	percent int    // the percentage to restore after the last pause
}

// Percent is the GOGC that makes the collection after one that left live
// bytes live start at floor bytes of heap, and never below 100 (the heap
// may always double its live part, as without a floor).
func Percent(live, floor uint64) int {
	if live == 0 || floor <= 2*live {
		return 100
	}
	p := floor*100/live - 100
	if p > 1<<20 {
		p = 1 << 20
	}
	return int(p)
}

// Start sets the floor in bytes and follows every collection from now on
// (a floor of 0 only follows them). Call it once, with no GOGC of the
// user's to keep.
func Start(floor uint64) {
	state.Lock()
	state.floor = floor
	start := !state.started
	state.started = true
	state.Unlock()
	tune()
	if start {
		follow()
	}
}

// Floor is the floor set, 0 if none.
func Floor() uint64 {
	state.Lock()
	defer state.Unlock()
	return state.floor
}

// follow calls tune after the next collection, and again after each one
// that follows: a finalizer runs once the collection that found its object
// unreachable is done.
func follow() {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		tune()
		follow()
	})
}

// sentinel is a type of its own with a pointer in it, so that each is a
// separate allocation (the runtime combines tiny pointer-free objects, and
// one of those might never be freed).
type sentinel struct{ _ *int }

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// tunes counts the calls of tune (the tests wait for the one after a
// collection).
var tunes atomic.Int64

// tune sets the percentage from the live heap the last collection left.
func tune() {
	defer tunes.Add(1)
	state.Lock()
	defer state.Unlock()
	if state.floor == 0 || state.paused > 0 {
		return
	}
	debug.SetGCPercent(Percent(live(), state.floor))
}

// live is the heap the last collection marked live (0 before the first).
func live() uint64 {
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return liveSample[0].Value.Uint64()
}

// Pause turns the collector off until the returned function is called.
// Pauses nest: the first turns it off, the last to end turns it back on,
// to the floor's percentage when there is a floor, else to the percentage
// that was set before the first.
func Pause() (resume func()) {
	state.Lock()
	if state.paused == 0 {
		state.percent = debug.SetGCPercent(-1)
	}
	state.paused++
	state.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			state.Lock()
			state.paused--
			done := state.paused == 0
			if done && state.floor == 0 {
				debug.SetGCPercent(state.percent)
			}
			state.Unlock()
			if done {
				tune()
			}
		})
	}
}
