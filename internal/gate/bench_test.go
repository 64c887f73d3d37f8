package gate_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
)

// BenchmarkCheck10k parses and checks a generated render of 10,000 objects
// with three containers per workload (make bench runs it).
func BenchmarkCheck10k(b *testing.B) {
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 10000, Images: 400, Registry: "ghcr.io"}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		nodes, err := render.Parse(buf.Bytes(), "render.yaml")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := gate.Run(context.Background(), nodes, gate.Options{}, gate.Deps{}); err != nil {
			b.Fatal(err)
		}
	}
}

// digestResolver answers every reference with one digest: the benchmark
// measures pinning and checking, not the registry (internal/resolve has its
// own benchmark against a real one).
type digestResolver struct{}

func (digestResolver) Resolve(_ context.Context, refs []string) map[string]images.Resolution {
	out := make(map[string]images.Resolution, len(refs))
	for _, r := range refs {
		out[r] = images.Resolution{Digest: "sha256:" + strings.Repeat("a", 64)}
	}
	return out
}

// BenchmarkPin10k pins and checks a generated render of 10,000 objects.
func BenchmarkPin10k(b *testing.B) {
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 10000, Images: 400, Registry: "ghcr.io"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		nodes, err := render.Parse(buf.Bytes(), "render.yaml")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := gate.Run(context.Background(), nodes, gate.Options{Pin: true}, gate.Deps{Resolver: digestResolver{}}); err != nil {
			b.Fatal(err)
		}
	}
}
