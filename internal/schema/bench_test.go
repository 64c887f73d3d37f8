package schema

import (
	"context"
	"testing"
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
