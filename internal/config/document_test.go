package config

import (
	"strings"
	"testing"
)

// The README writes `digest: off` and `rules: {id: off}` unquoted; YAML 1.1
// reads those as booleans, and they must still mean the word.
func TestYAML11WordsAreStringsWhereTheSchemaSaysString(t *testing.T) {
	obj, err := Decode([]byte(`apiVersion: kubectl-gate.dev/v1alpha1
kind: Gate
metadata: {name: no}
spec:
  images: {digest: off}
  rules: {image-digest: off, render-empty: warning}
`))
	if err != nil {
		t.Fatal(err)
	}
	if obj.Spec.Images.Digest != DigestOff || obj.Spec.Rules["image-digest"] != "off" || obj.Metadata.Name != "no" {
		t.Errorf("decoded %+v", obj)
	}
	_, err = Decode([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec: {rules: {image-digest: yes}}\n"))
	if err == nil || !strings.Contains(err.Error(), `"yes"`) {
		t.Errorf("rules: {x: yes}: want an error naming the word, got %v", err)
	}
	_, err = Decode([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec: {render: {minResources: off}}\n"))
	if err == nil {
		t.Error("a word where the schema wants a number was accepted")
	}
}

func TestConfigIsOneDocument(t *testing.T) {
	const gate = "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec: {}\n"
	if _, err := Decode([]byte("---\n" + gate + "---\n")); err != nil {
		t.Errorf("one document between separators: %v", err)
	}
	for name, in := range map[string]string{
		"two objects":        gate + "---\n" + strings.Replace(gate, "{}", "{rules: {image-digest: off}}", 1),
		"nothing":            "---\n",
		"not YAML":           "spec: [\n",
		"duplicate key":      gate + "spec: {rules: {image-digest: off}}\n",
		"bare list":          "- a\n",
		"unknown field":      gate + "extra: 1\n",
		"alias to a missing": "apiVersion: *x\n",
	} {
		if _, err := Decode([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec: {images: {digest: off}, rules: {image-digest: off}}\n"))
	f.Add([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Pin\nspec: {images: {platform: linux/arm64, mirrors: {docker.io: m.local:5000}}}\n---\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := Decode(b)
		if err == nil && (obj.Kind != KindGate && obj.Kind != KindPin) {
			t.Fatalf("accepted kind %q", obj.Kind)
		}
	})
}
