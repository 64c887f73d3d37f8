package rolloutvalidation

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// TestJSONOfIsMarshalJSON: the JSON decoded from the node is, byte for
// byte, what kyaml's RNode.MarshalJSON prints and parses again, on every
// object of the vendored corpus.
func TestJSONOfIsMarshalJSON(t *testing.T) {
	var n int
	root := filepath.Join("..", "..", "testdata", "corpus")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (!strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".yml")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		objs, err := kio.FromBytes(data)
		if err != nil {
			return nil // not a stream of objects: not this test's subject
		}
		for _, obj := range objs {
			want, werr := obj.MarshalJSON()
			got, gerr := jsonOf(obj)
			if (werr == nil) != (gerr == nil) {
				t.Errorf("%s: MarshalJSON error %v, jsonOf error %v", path, werr, gerr)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: %s/%s:\njsonOf      %s\nMarshalJSON %s", path, obj.GetKind(), obj.GetName(), got, want)
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 200 {
		t.Fatalf("compared %d objects; the corpus should give at least 200", n)
	}
	t.Logf("compared %d objects", n)
}
