package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// tricky holds documents whose scalars, keys and structure are edge cases
// for the direct conversion: each either converts exactly as the JSON round
// trip does or is left to it.
var tricky = []string{
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: '1', b: \"true\", c: x}\n",
	"apiVersion: v1\nkind: X\nspec: {i: 1, n: -3, f: 1.5, g: 1.0, h: -0.0, e: 1e3, e2: 2.5e-3, big: 9223372036854775807, bigger: 9223372036854775808, huge: 1e300}\n",
	"apiVersion: v1\nkind: X\nspec: {hex: 0x1F, oct: 0o17, under: 1_000, inf: .inf, ninf: -.inf, nan: .nan, plus: +5, pf: +1.5}\n",
	"apiVersion: v1\nkind: X\nspec: {t: True, f: FALSE, y: yes, n: no, on: on, nul: ~, n2: Null, empty: , list: [1, 'a', null, {x: 1}], nested: [[1, [2]]]}\n",
	"apiVersion: v1\nkind: X\nspec: {date: 2024-01-01, ts: 2024-01-01T10:00:00Z, bin: !!binary aGVsbG8=, tagged: !!str 12, custom: !foo bar}\n",
	"apiVersion: v1\nkind: X\nspec: {1: a, true: b, null: c, 1.5: d}\n",
	"apiVersion: v1\nkind: X\nbase: &b {x: 1, y: [1]}\nspec: {<<: *b, y: 2, ref: *b}\n",
	"apiVersion: v1\nkind: X\nspec:\n  s: \"multi\\nline\"\n  u: \"\\u00e9\"\n  q: ''''\n  block: |\n    a\n    b\n  folded: >-\n    c\n    d\n",
	"apiVersion: v1\nkind: X\nspec: {mode: 0644, m2: 0755, neg: -012, pos: +012, z: 0, z2: -0, f: 0.5, f0: 00.5, t: !!int 0755, tf: !!float 012, n: !!null ~}\n",
	"apiVersion: v1\nkind: X\nspec: {bad: !!null foo}\n",
	"apiVersion: v1\nkind: X\nspec: {f1: 1e18, f2: 1e17, f3: 123456789012345678.0, f4: 0.1e1, f5: 1E+2, f6: -1.e2}\n",
}

// TestFastUnstructuredAgrees checks the direct conversion against the JSON
// round trip on every document of the vendored manifests and on edge cases:
// where the direct path takes a document, the result is the round trip's.
func TestFastUnstructuredAgrees(t *testing.T) {
	var docs []*yaml.RNode
	for _, d := range tricky {
		nodes, err := kio.FromBytes([]byte(d))
		if err != nil {
			t.Fatalf("%q: %v", d, err)
		}
		docs = append(docs, nodes...)
	}
	corpus := 0
	walk := func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(b)), OmitReaderAnnotations: true}).Read()
		if err != nil {
			return nil // not a manifest stream kio reads; the round trip never sees it either
		}
		corpus += len(nodes)
		docs = append(docs, nodes...)
		return nil
	}
	// The project's vendored manifests (the public repositories' corpus).
	for _, dir := range []string{"../../testdata", "../schema/testdata"} {
		if err := filepath.WalkDir(dir, walk); err != nil {
			t.Fatal(err)
		}
	}
	fast, slowOnly := 0, 0
	for _, n := range docs {
		if n.YNode().Kind != yaml.MappingNode {
			continue
		}
		got, ok := fastUnstructured(n.YNode())
		want, err := roundTrip(n)
		if !ok {
			slowOnly++
			continue
		}
		fast++
		if err != nil {
			if m, _ := got.(map[string]any); m["kind"] != nil && m["apiVersion"] != nil {
				t.Errorf("direct conversion took a document the round trip refuses (%v):\n%s", err, n.MustString())
			}
			continue
		}
		if !reflect.DeepEqual(got, want.Object) {
			t.Errorf("direct conversion differs from the round trip:\n got %#v\nwant %#v\n%s", got, want.Object, n.MustString())
		}
	}
	if corpus < 250 || fast < corpus*9/10 {
		t.Errorf("the direct path took %d of %d documents (%d from the corpus): the test does not exercise it", fast, fast+slowOnly, corpus)
	}
	if slowOnly == 0 {
		t.Error("no document was left to the round trip: the edge cases do not reach it")
	}
}

// FuzzFastUnstructured: on any YAML, the direct conversion either declines
// or agrees with the JSON round trip.
func FuzzFastUnstructured(f *testing.F) {
	for _, d := range tricky {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if !decodes(doc) {
			return
		}
		nodes, err := kio.FromBytes([]byte(doc))
		if err != nil {
			return
		}
		for _, n := range nodes {
			if n.YNode().Kind != yaml.MappingNode {
				continue
			}
			got, ok := fastUnstructured(n.YNode())
			if !ok {
				continue
			}
			want, err := roundTrip(n)
			if err != nil {
				continue // refused for a missing kind or apiVersion, checked by toUnstructured
			}
			if !reflect.DeepEqual(got, want.Object) {
				t.Fatalf("direct conversion differs from the round trip:\n got %#v\nwant %#v", got, want.Object)
			}
		}
	})
}

// decodes reports whether go-yaml's decoder takes doc's aliases: an alias
// that contains itself, or aliases expanded past its bound, never reach a
// policy. The gate's reader refuses them (-f); kustomize's reader (kyaml,
// as kio.FromBytes here) recurses on the first until the stack overflows,
// which the supervisor reports as no verdict.
func decodes(doc string) bool {
	d := yaml.NewDecoder(strings.NewReader(doc))
	for {
		var v any
		err := d.Decode(&v)
		switch {
		case errors.Is(err, io.EOF):
			return true
		case err != nil && (strings.Contains(err.Error(), "contains itself") || strings.Contains(err.Error(), "excessive aliasing")):
			return false
		case err != nil:
			return true // the target reads it, and may refuse it, as before
		}
	}
}

// TestEvaluateNamesUndecodableObject: an object that cannot be decoded,
// anywhere in the render, is an error naming it, never a pass.
func TestEvaluateNamesUndecodableObject(t *testing.T) {
	var render []*yaml.RNode
	for i := range 40 {
		render = append(render, yaml.MustParse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%d}\n", i)))
	}
	render = append(render, yaml.MustParse("metadata: {name: nokind}\n"))
	render = append(render, yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: last}\n"))
	set := &Set{}
	if _, err := Evaluate(context.Background(), set, render[:40], Options{}); err != nil {
		t.Fatalf("the decodable render: %v", err)
	}
	if _, err := Evaluate(context.Background(), set, render, Options{}); err == nil || !strings.Contains(err.Error(), "object 40") {
		t.Errorf("an object without kind: err = %v, want one naming object 40", err)
	}
}
