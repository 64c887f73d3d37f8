package rolloutvalidation

import (
	"bytes"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// TestJSONOfIsMarshalJSON: the JSON decoded from the node is, byte for
// byte, what kyaml's RNode.MarshalJSON prints and parses again, on every
// object of the vendored corpus.
func TestJSONOfIsMarshalJSON(t *testing.T) {
	var n int
	testutil.CorpusYAML(t, func(path string, data []byte) {
		objs, err := kio.FromBytes(data)
		if err != nil {
			return // not a stream of objects: not this test's subject
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
	})
	if n < 200 {
		t.Fatalf("compared %d objects; the corpus should give at least 200", n)
	}
	t.Logf("compared %d objects", n)
}
