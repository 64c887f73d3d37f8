// Command registry serves an OCI registry on loopback for the demo and the
// benchmarks: go-containerregistry's in-process registry, seeded with the
// example images, optionally slowed down, counting manifest requests.
//
//	go run ./examples/registry -addr-file /tmp/reg.addr -seed demo
//	go run ./examples/registry -seed bench:400 -delay 20ms
//
// GET /_stats returns {"manifestRequests": N, "requests": N}. It is a test
// and demo tool, never part of the shipped binaries.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// demoImages are the example shop's images, as repo:tag.
var demoImages = []string{
	"example-shop/web:1.4.2", "example-shop/web:1.5.0-rc.1", "example-shop/web:latest",
	"example-shop/worker:2.0.1", "example-shop/worker:latest",
	"example-shop/checkout:3.1.0", "example-shop/ledger:1.0.0",
}

type counting struct {
	next             http.Handler
	delay            atomic.Int64 // nanoseconds
	requests, mfests atomic.Int64
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_stats" {
		_ = json.NewEncoder(w).Encode(map[string]int64{"requests": c.requests.Load(), "manifestRequests": c.mfests.Load()})
		return
	}
	c.requests.Add(1)
	if strings.Contains(r.URL.Path, "/manifests/") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		c.mfests.Add(1)
		time.Sleep(time.Duration(c.delay.Load()))
	}
	c.next.ServeHTTP(w, r)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	addrFile := flag.String("addr-file", "", "write host:port here once serving")
	seed := flag.String("seed", "demo", "what to push: demo, bench:N, or none")
	delay := flag.Duration("delay", 0, "added to every manifest request")
	flag.Parse()
	if err := run(*addr, *addrFile, *seed, *delay); err != nil {
		log.Fatalf("registry: %v", err)
	}
}

func run(addr, addrFile, seed string, delay time.Duration) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	if !ln.Addr().(*net.TCPAddr).IP.IsLoopback() {
		return fmt.Errorf("refusing to serve on %s: loopback only", ln.Addr())
	}
	h := &counting{next: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	host := ln.Addr().String()
	if err := push(host, seed); err != nil {
		return err
	}
	h.delay.Store(int64(delay)) // seeding is not slowed down
	if addrFile != "" {
		if err := os.WriteFile(addrFile, []byte(host+"\n"), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", addrFile, err)
		}
	}
	fmt.Fprintf(os.Stderr, "registry: serving on %s (seed %s, delay %s)\n", host, seed, delay)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return srv.Close()
}

// push seeds the registry.
func push(host, seed string) error {
	var refs []string
	switch {
	case seed == "none":
	case seed == "demo":
		refs = demoImages
	case strings.HasPrefix(seed, "bench:"):
		n, err := strconv.Atoi(strings.TrimPrefix(seed, "bench:"))
		if err != nil {
			return fmt.Errorf("seed %q: %w", seed, err)
		}
		for i := 0; i < n; i++ {
			refs = append(refs, fmt.Sprintf("bench/app-%04d:v1", i))
		}
	default:
		return fmt.Errorf("seed %q: want demo, bench:N or none", seed)
	}
	for _, r := range refs {
		if err := pushOne(host + "/" + r); err != nil {
			return err
		}
	}
	return nil
}

// pushOne pushes a random image; the web images are multi-arch indexes, as
// real ones are.
func pushOne(ref string) error {
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		return fmt.Errorf("seeding %s: %w", ref, err)
	}
	if strings.Contains(ref, "/web:") {
		idx, err := random.Index(512, 1, 2)
		if err == nil {
			idx = mutate.IndexMediaType(idx, "application/vnd.oci.image.index.v1+json")
			err = remote.WriteIndex(tag, idx)
		}
		if err != nil {
			return fmt.Errorf("seeding %s: %w", ref, err)
		}
		return nil
	}
	img, err := random.Image(512, 1)
	if err != nil {
		return fmt.Errorf("seeding %s: %w", ref, err)
	}
	if err := remote.Write(tag, img); err != nil {
		return fmt.Errorf("seeding %s: %w", ref, err)
	}
	return nil
}
