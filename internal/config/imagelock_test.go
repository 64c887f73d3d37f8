package config

import (
	"strings"
	"testing"
)

func TestImageLockConfig(t *testing.T) {
	gate := func(lock string) string {
		return "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec:\n  images:\n    lock: " + lock + "\n"
	}
	obj, err := Decode([]byte(gate("gate.lock")))
	if err != nil || obj.Spec.Images.Lock.Path != "gate.lock" {
		t.Fatalf("a path: %v %+v", err, obj)
	}
	inline := `{apiVersion: kubectl-gate.dev/v1alpha1, kind: ImageLock, metadata: {name: l}, spec: {images: [{image: "nginx:1", digest: "sha256:` + strings.Repeat("a", 64) + `"}]}}`
	obj, err = Decode([]byte(gate(inline)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := obj.Spec.Images.ImageLock()
	if err != nil || len(l.Spec.Images) != 1 {
		t.Fatalf("inline lock: %v %+v", err, l)
	}
	bad := strings.Replace(inline, "digest:", "digset:", 1)
	if _, err := Decode([]byte(gate(bad))); err == nil || !strings.Contains(err.Error(), "spec.images.lock") || !strings.Contains(err.Error(), "digset") {
		t.Errorf("a misspelt inline lock field: %v", err)
	}
	if _, err := Decode([]byte(gate(`""`))); err == nil || !strings.Contains(err.Error(), "empty path") {
		t.Errorf("an empty path: %v", err)
	}
	// An in-tree Gate may add a lock the trusted config leaves out, never
	// replace the trusted one.
	trusted, inTree := *Default(), *Default()
	inTree.Images.Lock = &Entry{Path: "tree.lock"}
	if got := Tighten(trusted, inTree, nil); got.Images.Lock == nil || got.Images.Lock.Path != "tree.lock" {
		t.Errorf("in-tree lock not taken: %+v", got.Images.Lock)
	}
	trusted.Images.Lock = &Entry{Path: "trusted.lock"}
	if got := Tighten(trusted, inTree, nil); got.Images.Lock.Path != "trusted.lock" {
		t.Errorf("in-tree lock replaced the trusted one: %+v", got.Images.Lock)
	}
}
