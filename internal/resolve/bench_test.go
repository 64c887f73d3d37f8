package resolve

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkResolve400x4000 resolves 4,000 references to 400 unique tags (in
// 20 repositories, each tag used 10 times) against the in-process registry
// with 20 ms added to every manifest request — the gate's "monorepo with
// many overlays" case. Each iteration uses a fresh Resolver, so nothing is
// remembered between iterations.
//
// requests/op is the manifest requests the registry saw per iteration (the
// goal: 400, one per unique reference); http-requests/op adds pings (an
// HTTPS and a plain-HTTP one per repository on loopback); ideal-ratio is the wall time over
// ⌈400 / jobs⌉ × 20 ms, the floor for the default 8 jobs (the goal: ≤ 1.3).
func BenchmarkResolve400x4000(b *testing.B) {
	const (
		unique  = 400
		repeats = 10
		latency = 20 * time.Millisecond
	)
	tr := newRegistry(b, slowManifests(latency))
	var tags []string
	for i := range unique {
		tags = append(tags, fmt.Sprintf("repo%02d/app:v%d", i%20, i))
	}
	want := tr.pushImages(b, tags)
	refs := make([]string, 0, unique*repeats)
	for range repeats {
		for _, tag := range tags {
			refs = append(refs, tr.ref(tag))
		}
	}
	tr.manifests.Store(0)
	var all int64

	for b.Loop() {
		r := newResolver(b, tr, Options{})
		got := r.Resolve(b.Context(), refs)
		all += r.Stats().Requests
		for _, tag := range tags {
			if res := got[tr.ref(tag)]; res.Err != nil || res.Digest != want[tag] {
				b.Fatalf("%s: %+v, want %s", tag, res, want[tag])
			}
		}
	}

	n := float64(b.N)
	ideal := time.Duration((unique+DefaultJobs-1)/DefaultJobs) * latency
	b.ReportMetric(float64(tr.manifests.Load())/n, "requests/op")
	b.ReportMetric(float64(all)/n, "http-requests/op")
	b.ReportMetric(float64(b.Elapsed())/n/float64(ideal), "ideal-ratio")
}
