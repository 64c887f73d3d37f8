package schema

import (
	"bytes"
	"context"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
)

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateDeployment(b *testing.B) {
	v, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	objs := parse(b, deployment)
	b.ResetTimer()
	for b.Loop() {
		if _, err := v.Validate(context.Background(), objs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate10k validates the 10,000-object bench render
// (internal/benchgen): the schema stage's share of `check`.
func BenchmarkValidate10k(b *testing.B) {
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 10000, Images: 400, Registry: "127.0.0.1:5000"}); err != nil {
		b.Fatal(err)
	}
	objs := parse(b, buf.String())
	v, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		rs, err := v.Validate(context.Background(), objs)
		if err != nil {
			b.Fatal(err)
		}
		if len(rs) != 0 {
			b.Fatalf("bench render has %d schema results, first: %s", len(rs), rs[0])
		}
	}
}

// BenchmarkToUnstructured10k converts the 10,000-object bench render to the
// JSON data model, the first step of every object's validation.
func BenchmarkToUnstructured10k(b *testing.B) {
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 10000, Images: 400, Registry: "127.0.0.1:5000"}); err != nil {
		b.Fatal(err)
	}
	objs := parse(b, buf.String())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, n := range objs {
			if _, dups := toUnstructured(n.YNode()); len(dups) != 0 {
				b.Fatalf("duplicate keys in the bench render: %v", dups)
			}
		}
	}
}
