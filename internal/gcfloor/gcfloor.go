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
// The floor is the memory a run may use whatever it checks: 128 MiB, more
// for a large stream or a render (Raise, Input), never more than a quarter
// of the Go memory limit or of the container's (Capped). It is set only
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

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// DefaultFloor is the heap floor child.Arm sets: 128 MiB. On the 9,020-object
// bench render it saved 11–15% of the check's CPU for 4–14 MiB more peak
// memory (paired runs; the heap reached ~140 MiB with GOGC=100 too, at its
// end); 100 MiB saved nothing, 160 MiB cost 28 MiB more for no more saving.
const DefaultFloor = 128 << 20

// Floors beyond DefaultFloor, for what the run is given (Raise, Input).
const (
	// RenderFloor is the floor once the gate renders sources itself
	// (kustomize, Helm): a render allocates ~350 KB for each object it
	// yields and the gate keeps almost none of it once the unit is
	// checked, so the collector's work is the number of its cycles over
	// a live heap that does not shrink with them. On the bench estate of
	// 500 and 2,000 Applications it took 0.87× and 0.80× the wall time of
	// DefaultFloor (paired runs), and made 2,000 Applications 4.3× the
	// 500 (4.6× before), for a peak of ~350 MB at both (+90 MB).
	RenderFloor = 256 << 20
	// InputFactor is the floor per byte of input the gate reads (Input):
	// the streamed check keeps about 10 bytes of heap for each (the
	// objects the cross-object rules read, the names of the rest), and a
	// floor of twice that keeps the collector's cycles as few for a large
	// render as for a small one. With a fixed floor a render of 36,020
	// objects, whose live heap outgrew half of it early, was collected 12
	// times to the 9,020-object render's 5, and its time grew 4.9× for 4×
	// the objects; with this factor, 6 times, and 3.9× (make bench).
	InputFactor = 20
	// MaxFloor bounds Raise and Input: 512 MiB (the 36,020-object render,
	// 24 MB, reaches it and peaks at ~600 MB). Past it the heap doubles
	// its live part as with GOGC=100.
	MaxFloor = 512 << 20
)

var state struct {
	sync.Mutex
	floor   uint64 // 0: no floor
	input   uint64 // bytes of input read (Input)
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

// Raise raises the floor to floor bytes (at most MaxFloor) when it is
// lower; it never lowers it. Without a floor (the user's GOGC) it does
// nothing.
func Raise(floor uint64) {
	state.Lock()
	raised := state.floor != 0 && raise(floor)
	state.Unlock()
	if raised {
		tune()
	}
}

// raise is Raise with state held: whether the floor rose.
func raise(floor uint64) bool {
	floor = min(floor, MaxFloor)
	if floor <= state.floor {
		return false
	}
	state.floor = floor
	return true
}

// Input counts n more bytes of input the run reads and may keep part of
// (a file or stdin the gate's reader parses) and raises the floor to
// InputFactor times all it counted: the heap a check keeps grows with its
// render, and so does the floor (see InputFactor).
func Input(n int) {
	if n <= 0 {
		return
	}
	state.Lock()
	state.input += uint64(n)
	raised := state.floor != 0 && raise(state.input*InputFactor)
	state.Unlock()
	if raised {
		tune()
	}
}

// Applied is the floor as tune applies it now (Floor, Capped), 0 if none.
func Applied() uint64 {
	f := Floor()
	if f == 0 {
		return 0
	}
	return Capped(f, uint64(debug.SetMemoryLimit(-1)), containerLimit())
}

// Floor is the floor set, 0 if none; tune applies it Capped.
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
	debug.SetGCPercent(Percent(live(), Capped(state.floor, uint64(debug.SetMemoryLimit(-1)), containerLimit())))
}

// Capped is the floor tune applies: floor, but at most a quarter of the Go
// memory limit (GOMEMLIMIT, or the supervisor's below its cap) and of the
// container's memory limit (cgroup; 0: none). The floor is heap the
// collector lets garbage fill: in a container of 512 MiB (an Argo CD
// repo-server sidecar) it stays at 128 MiB whatever the run reads.
func Capped(floor, goLimit, container uint64) uint64 {
	floor = min(floor, goLimit/4)
	if container > 0 {
		floor = min(floor, container/4)
	}
	return floor
}

// containerLimit is the memory limit of the process's cgroup (v1 or v2,
// the lowest over its hierarchy), 0 if none or unknown (anywhere but
// Linux), read once by automemlimit's memlimit.FromCgroup.
var containerLimit = sync.OnceValue(func() uint64 {
	limit, err := memlimit.FromCgroup()
	if err != nil {
		return 0
	}
	return limit
})

// live is the heap the last collection marked live, but at least the
// runtime's minimum heap (runtimeMinimum), 0 included (before the first
// collection): below it the runtime's goal is that minimum scaled by the
// percentage, so the percentage is sized against it.
func live() uint64 {
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() != metrics.KindUint64 {
		return runtimeMinimum
	}
	return max(liveSample[0].Value.Uint64(), runtimeMinimum)
}

// runtimeMinimum is the Go runtime's minimum heap at GOGC=100 (4 MiB; it
// scales with the percentage): the heap goal is never below that minimum
// times the percentage over 100. Sized against a live heap of 0 before the
// first collection, the floor was GOGC=100 there, and the child, whose
// packages allocate ~17 MB while the collector is off, was collected twice
// at once (at 18 MB) before the floor took hold; sized against a live heap
// of 160 KiB, the next collection came after 4 GiB.
const runtimeMinimum = 4 << 20

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
