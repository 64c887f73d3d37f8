package gate_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
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
