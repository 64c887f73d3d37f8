package stream

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestEncodeIsByteWriter: Encode writes, byte for byte, what kio.ByteWriter
// writes, for every manifest stream vendored in testdata and for objects
// with reader annotations, empty annotations or metadata, wide sequence
// indents and bare sequences; and it leaves the objects untouched.
func TestEncodeIsByteWriter(t *testing.T) {
	streams := [][]*yaml.RNode{}
	read := func(text string, keepAnnotations bool) []*yaml.RNode {
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(text), OmitReaderAnnotations: !keepAnnotations,
			PreserveSeqIndent: keepAnnotations, WrapBareSeqNode: keepAnnotations}).Read()
		if err != nil {
			return nil
		}
		return nodes
	}
	edge := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: {}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    keep: x\n---\n" +
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n        - name: a\n          image: x\n"
	streams = append(streams, read(edge+"---\n- a\n- b\n", true), read(edge, false))
	// A document head comment set apart by a blank line lives on the
	// document node, which an object copied for cleaning must keep.
	headed := "# what this example shows\n\n" + edge
	streams = append(streams, read(headed, true), read(headed, false))
	// Not plain objects: duplicate metadata or annotations keys, metadata
	// that is not a mapping. Encode must still equal kio.ByteWriter.
	dup := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nmetadata: {}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations: {x: y}\n  annotations: {}\n"
	if nodes, err := kio.FromBytes([]byte(dup)); err == nil {
		streams = append(streams, nodes)
	} else {
		t.Fatal(err)
	}
	n := 0
	err := filepath.WalkDir("../../testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if nodes := read(string(b), n%2 == 0); len(nodes) > 0 {
			streams = append(streams, nodes)
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("only %d vendored streams read", n)
	}
	snapshot := func(nodes []*yaml.RNode) string {
		var b bytes.Buffer
		if err := (kio.ByteWriter{Writer: &b, KeepReaderAnnotations: true}).Write(nodes); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for i, nodes := range streams {
		if len(nodes) < 2 {
			continue // Encode hands a single object to kio.ByteWriter itself
		}
		orig := snapshot(nodes)
		var want bytes.Buffer
		if err := (kio.ByteWriter{Writer: &want}).Write(nodes); err != nil {
			t.Fatalf("stream %d: kio.ByteWriter: %v", i, err)
		}
		got, err := Encode(nodes)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("stream %d differs from kio.ByteWriter:\n got %q\nwant %q", i, got, want.String())
		}
		if snapshot(nodes) != orig {
			t.Errorf("stream %d: Encode changed the objects", i)
		}
	}
}
