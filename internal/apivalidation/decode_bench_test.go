package apivalidation

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
)

// BenchmarkValidateRender runs the stage on the built-in objects of a
// 1,000-object bench render: the whole stage, and its decoding in memory
// and through JSON.
func BenchmarkValidateRender(b *testing.B) {
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 1000, Images: 40, Registry: "ghcr.io", Pinned: true}); err != nil {
		b.Fatal(err)
	}
	var objs []map[string]any
	r := utilyaml.NewYAMLReader(bufio.NewReader(&buf))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			b.Fatal(err)
		}
		if m != nil && Handles(m["apiVersion"].(string), m["kind"].(string)) {
			objs = append(objs, integers(m).(map[string]any))
		}
	}
	gvk := func(m map[string]any) schema.GroupVersionKind {
		gv, _ := schema.ParseGroupVersion(m["apiVersion"].(string))
		return gv.WithKind(m["kind"].(string))
	}
	b.Logf("%d built-in objects", len(objs))
	b.Run("decode-memory", func(b *testing.B) {
		for b.Loop() {
			for _, m := range objs {
				if _, err := decode(m, gvk(m), legacyscheme.Scheme, legacyscheme.Codecs); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("decode-json", func(b *testing.B) {
		for b.Loop() {
			for _, m := range objs {
				if _, err := decodeJSON(m, gvk(m), legacyscheme.Codecs); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("validate", func(b *testing.B) {
		for b.Loop() {
			for _, m := range objs {
				Validate(m)
			}
		}
	})
}
