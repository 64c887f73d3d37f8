package plugin_test

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// BenchmarkPinSignatures measures what signature verification costs pin:
// N unique images (BENCH_SIGN_N, 20), each signed with a key (a bundle
// found through the referrers tag fallback: the in-process registry has
// no referrers API), against the in-process registry with BENCH_SIGN_DELAY
// (20ms) added to every request. It pins them without a signer (the
// baseline), with --key (no cache), with --key --cache on an empty cache
// (cold) and again on the same cache (warm: the tags are asked again, the
// signatures are not), and reports each run's wall time and registry
// requests (all, and those for signatures: referrers, sha256-<hex> tags,
// blobs).
func BenchmarkPinSignatures(b *testing.B) {
	n := envInt(b, "BENCH_SIGN_N", 20)
	delay := 20 * time.Millisecond
	if v := os.Getenv("BENCH_SIGN_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		delay = d
	}
	reg := testutil.StartRegistry(b)
	ci := testutil.NewSigner(b)
	var imgs []string
	for i := range n {
		repo := "bench/app" + strconv.Itoa(i)
		d := reg.PushImage(b, repo+":1.0")
		ci.SignBundle(b, testutil.Digest(b, reg.Host+"/"+repo+"@"+d), "")
		imgs = append(imgs, reg.Host+"/"+repo+":1.0")
	}
	var all, sigs atomic.Int64
	reg.Wrap = func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		time.Sleep(delay)
		all.Add(1)
		if p := r.URL.Path; strings.Contains(p, "/referrers/") || strings.Contains(p, "/manifests/sha256-") || strings.Contains(p, "/blobs/") {
			sigs.Add(1)
		}
		next.ServeHTTP(w, r)
	}
	render := workloads(1, imgs...)
	bin := testutil.Bin(b, "kubectl-gate")
	env := []string{"KUBECTL_GATE_CACHE_KEY=bench"}
	run := func(name string, args ...string) {
		b.Helper()
		all.Store(0)
		sigs.Store(0)
		start := time.Now()
		r := testutil.Run(b, testutil.Root(b), render, env, bin, append([]string{"pin", "-f", "-", "--insecure-registry", reg.Host}, args...)...)
		wall := time.Since(start)
		if r.Code != 0 {
			b.Fatalf("%s: exit %d\n%s", name, r.Code, r.Stderr)
		}
		b.ReportMetric(float64(wall.Milliseconds()), name+"-ms")
		b.ReportMetric(float64(all.Load()), name+"-req")
		b.ReportMetric(float64(sigs.Load()), name+"-sigreq")
	}
	for range b.N {
		cache := b.TempDir()
		run("nokey")
		run("key", "--key", ci.PubFile)
		run("cold", "--key", ci.PubFile, "--cache", cache)
		run("warm", "--key", ci.PubFile, "--cache", cache)
		if sigs.Load() != 0 {
			b.Fatalf("warm: %d signature requests, want 0", sigs.Load())
		}
	}
}

func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
