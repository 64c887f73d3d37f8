package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// Profiling for development (make bench, issue 25): with
// KUBECTL_GATE_CPUPROFILE set, the run writes a CPU profile to that file;
// with KUBECTL_GATE_MEMPROFILE, a heap profile at the end of the run
// (allocations included: go tool pprof -sample_index=alloc_space); with
// KUBECTL_GATE_TRACE, an execution trace (go tool trace: which core did
// what when). None changes the verdict; a profile that cannot be written
// is said on stderr.
const (
	envCPUProfile = "KUBECTL_GATE_CPUPROFILE"
	envMemProfile = "KUBECTL_GATE_MEMPROFILE"
	envTrace      = "KUBECTL_GATE_TRACE"
)

// startProfiles starts what the environment asks for and returns the
// function that writes the profiles out.
func startProfiles() (stop func()) {
	var stops []func()
	// stream starts writing to the file env names, if any; end stops it.
	stream := func(env, what string, start func(io.Writer) error, end func()) {
		path := os.Getenv(env)
		if path == "" {
			return
		}
		f, err := os.Create(path)
		if err == nil {
			err = start(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kubectl gate: %s: cannot write the %s: %v\n", env, what, err)
			return
		}
		stops = append(stops, func() { end(); _ = f.Close() })
	}
	stream(envCPUProfile, "CPU profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
	stream(envTrace, "trace", trace.Start, trace.Stop)
	if path := os.Getenv(envMemProfile); path != "" {
		runtime.MemProfileRate = 64 * 1024
		stops = append(stops, func() {
			// The profile is as of the last completed collection: one
			// now counts every allocation of the run, so two runs'
			// totals compare whatever their collections did.
			runtime.GC()
			f, err := os.Create(path)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "kubectl gate: %s: cannot write the heap profile: %v\n", envMemProfile, err)
			}
		})
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
