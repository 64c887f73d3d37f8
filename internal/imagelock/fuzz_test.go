package imagelock

import (
	"bytes"
	"testing"
)

// FuzzParse feeds the lock parser arbitrary bytes (a lock is pull-request
// controlled): no panic; a lock it accepts writes back to one it accepts
// with the same entries, and checking any of its entries' pinned
// references against it passes.
func FuzzParse(f *testing.F) {
	f.Add([]byte(lockYAML))
	f.Add([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: ImageLock\nspec: {images: []}\n"))
	f.Add([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: ImageLock\nspec:\n  images:\n  - {image: a, digest: x}\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("{}"))
	f.Add([]byte("spec: {images: [{image: [1]}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			return
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatalf("Marshal of an accepted lock: %v", err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("written lock does not parse: %v\n%s", err, out)
		}
		if len(back.Spec.Images) != len(l.Spec.Images) {
			t.Fatalf("round trip kept %d of %d entries", len(back.Spec.Images), len(l.Spec.Images))
		}
		again, _ := back.Marshal()
		if !bytes.Equal(out, again) {
			t.Fatalf("writing is not stable:\n%s\n---\n%s", out, again)
		}
		ix := NewIndex(Source{Name: "fuzz", Lock: l})
		for _, e := range l.Spec.Images {
			ref := e.Image + "@" + e.Digest
			if p, ok := ix.Check(ref); !ok && len(ix.byTag[e.key()[:len(e.key())-len(e.Platform)-1]]) == 1 {
				t.Fatalf("Check(%q) against its own lock: %s", ref, p.Message)
			}
		}
	})
}
