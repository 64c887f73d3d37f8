package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		live, floor uint64
		want        int
	}{
		{0, 128 << 20, 100},
		{runtimeMinimum, 128 << 20, 3100}, // before the first collection (live's stand-in)
		{8 << 20, 128 << 20, 1500},        // the next collection at 128 MiB
		{32 << 20, 128 << 20, 300},
		{64 << 20, 128 << 20, 100}, // twice the live heap is the floor
		{100 << 20, 128 << 20, 100},
		{1, 1 << 40, 1 << 20},      // bounded
		{48 << 20, 128 << 20, 166}, // not 100: 128/48 rounds down to 2
		{8 << 20, 0, 100},
	} {
		if got := Percent(tc.live, tc.floor); got != tc.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", tc.live, tc.floor, got, tc.want)
		}
	}
}

// percent reads the collector's percentage.
// applied is the floor tune applies in this process (Capped): the tests
// may run under a GOMEMLIMIT or in a container with a memory limit.
func applied(floor uint64) uint64 {
	return Capped(floor, uint64(debug.SetMemoryLimit(-1)), containerLimit())
}

func percent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// collect runs a collection and waits for the tune that follows it.
func collect(t *testing.T) {
	t.Helper()
	before := tunes.Load()
	runtime.GC()
	for end := time.Now().Add(10 * time.Second); tunes.Load() == before; {
		if time.Now().After(end) {
			t.Fatal("no tune followed the collection")
		}
		time.Sleep(time.Millisecond)
	}
}

func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var sink []byte

// TestFloor: with a floor, 1 GiB of garbage on a small live heap is
// collected about once per floor's worth of it (with GOGC=100 alone, once
// per 4 MiB: some 250 times); a pause keeps the collector off whatever
// collections happen meanwhile, and its end gives the floor back; a live
// heap over half the floor collects as GOGC=100 does.
func TestFloor(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const floor = 64 << 20
	Start(floor)
	defer func() { state.Lock(); state.floor = 0; state.Unlock() }()
	collect(t)
	if p, want := percent(), Percent(live(), applied(floor)); p != want || p <= 100 {
		t.Fatalf("after a collection GOGC is %d, want %d (live %d)", p, want, live())
	}
	start := cycles()
	for range 1 << 14 { // 1 GiB in 64 KiB pieces, none kept
		sink = make([]byte, 64<<10)
	}
	// Not many fewer either: a live heap under the runtime's minimum
	// (this test's is) once made the goal that minimum scaled by a
	// percentage sized against the small heap, gigabytes past the floor.
	if n := cycles() - start; n > 1<<30/floor*2 || n < 1<<30/floor/2 {
		t.Errorf("1 GiB of garbage: %d collections, want about %d (live %d)", n, 1<<30/floor, live())
	}

	resume := Pause()
	collect(t)
	if p := percent(); p != -1 {
		t.Errorf("paused: after a collection GOGC is %d, want -1 (off)", p)
	}
	resume()
	resume() // a second call does nothing
	if p, want := percent(), Percent(live(), applied(floor)); p != want {
		t.Errorf("pause ended: GOGC is %d, want %d", p, want)
	}

	keep := make([][]byte, 0, 64)
	for range 48 { // 48 MiB live, more than half the floor
		keep = append(keep, make([]byte, 1<<20))
	}
	collect(t)
	if p := percent(); p != 100 {
		t.Errorf("a live heap of %d: GOGC is %d, want 100", live(), p)
	}
	runtime.KeepAlive(keep)
}

// TestPauseWithoutFloor: without a floor, pauses nest and the last to
// end restores the percentage that was set.
func TestPauseWithoutFloor(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	a, b := Pause(), Pause()
	if p := percent(); p != -1 {
		t.Fatalf("during two pauses GOGC is %d, want -1", p)
	}
	a()
	if p := percent(); p != -1 {
		t.Fatalf("one pause left: GOGC is %d, want -1", p)
	}
	b()
	if p := percent(); p != 150 {
		t.Fatalf("after both pauses GOGC is %d, want 150", p)
	}
}

// TestRaise: Raise and Input only raise the floor, never past MaxFloor,
// and the percentage follows at once; without a floor (the user's GOGC)
// neither sets one.
func TestRaise(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer func() { state.Lock(); state.floor, state.input = 0, 0; state.Unlock() }()

	Raise(RenderFloor)
	Input(1 << 30)
	if f := Floor(); f != 0 {
		t.Fatalf("without a floor, Raise and Input set %d", f)
	}
	state.Lock()
	state.input = 0
	state.Unlock()

	Start(DefaultFloor)
	collect(t)
	Input(DefaultFloor / InputFactor / 2) // under the floor: no change
	if f := Floor(); f != DefaultFloor {
		t.Fatalf("a small input moved the floor to %d", f)
	}
	Input(DefaultFloor / InputFactor) // 1.5× the floor's worth in all
	if f, want := Floor(), uint64(DefaultFloor/InputFactor*3/2*InputFactor); f != want {
		t.Fatalf("after 1.5 floors' worth of input the floor is %d, want %d", f, want)
	}
	if p, want := percent(), Percent(live(), applied(Floor())); p != want {
		t.Errorf("raised: GOGC is %d, want %d at once", p, want)
	}
	Raise(DefaultFloor) // lower: ignored
	if f := Floor(); f <= DefaultFloor {
		t.Errorf("Raise lowered the floor to %d", f)
	}
	Input(1 << 40)
	Raise(1 << 40)
	if f := Floor(); f != MaxFloor {
		t.Errorf("floor %d, want MaxFloor %d", f, MaxFloor)
	}

	// A Go memory limit caps the floor tune applies at a quarter of it.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	collect(t)
	if p, want := percent(), Percent(live(), Capped(MaxFloor, 1<<30, containerLimit())); p != want || want == Percent(live(), MaxFloor) {
		t.Errorf("under a 1 GiB memory limit GOGC is %d, want %d (not %d, the uncapped floor's)", p, want, Percent(live(), MaxFloor))
	}
}

func TestCapped(t *testing.T) {
	for _, tc := range []struct{ floor, goLimit, container, want uint64 }{
		{MaxFloor, math.MaxInt64, 0, MaxFloor},          // no limits
		{MaxFloor, 8 << 30 / 10 * 8, 0, MaxFloor},       // the supervisor's default
		{MaxFloor, math.MaxInt64, 512 << 20, 128 << 20}, // a 512 MiB container
		{RenderFloor, 600 << 20, 2 << 30, 150 << 20},    // GOMEMLIMIT=600MiB
		{DefaultFloor, 256 << 20, 0, 64 << 20},
	} {
		if got := Capped(tc.floor, tc.goLimit, tc.container); got != tc.want {
			t.Errorf("Capped(%d, %d, %d) = %d, want %d", tc.floor, tc.goLimit, tc.container, got, tc.want)
		}
	}
}
