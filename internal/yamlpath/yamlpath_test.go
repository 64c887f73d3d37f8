package yamlpath

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestReadAndSet(t *testing.T) {
	n := yaml.MustParse("kind: Pod\nmetadata:\n  name: web\n  annotations: {a: b}\nspec:\n  containers: [{name: c, image: nginx}]\n")
	if got := String(n.YNode(), "metadata.name"); got != "web" {
		t.Errorf("metadata.name = %q", got)
	}
	if got := String(n.YNode(), "spec.containers"); got != "" {
		t.Errorf("a list read as a string: %q", got)
	}
	if Dotted(n.YNode(), "spec.nope.deeper") != nil || Get(nil, "x") != nil {
		t.Error("a missing path was found")
	}
	if Annotation(n.YNode(), "a") != "b" || Annotation(n.YNode(), "z") != "" {
		t.Error("annotations misread")
	}
	for _, doc := range []string{"kind: A\n", "kind: B\nmetadata: {name: x}\n", "kind: C\nmetadata:\n  annotations: null\n"} {
		m := yaml.MustParse(doc)
		if !SetAnnotation(m.YNode(), "k", "v") || Annotation(m.YNode(), "k") != "v" {
			t.Errorf("SetAnnotation on %q:\n%s", doc, m.MustString())
		}
		SetAnnotation(m.YNode(), "k", "w")
		if Annotation(m.YNode(), "k") != "w" || strings.Count(m.MustString(), "k: ") != 1 {
			t.Errorf("overwrite on %q:\n%s", doc, m.MustString())
		}
	}
	if SetAnnotation(yaml.MustParse("[1, 2]").YNode(), "k", "v") {
		t.Error("set an annotation on a list")
	}
}

func TestDeleteAnnotation(t *testing.T) {
	n := yaml.MustParse("kind: A\nmetadata:\n  name: x\n  annotations: {a: '1', b: '2'}\n")
	DeleteAnnotation(n.YNode(), "a")
	if Annotation(n.YNode(), "a") != "" || Annotation(n.YNode(), "b") != "2" {
		t.Fatalf("after deleting a:\n%s", n.MustString())
	}
	DeleteAnnotation(n.YNode(), "b")
	if strings.Contains(n.MustString(), "annotations") || String(n.YNode(), "metadata.name") != "x" {
		t.Fatalf("an empty annotations map was left, or more was removed:\n%s", n.MustString())
	}
	DeleteAnnotation(yaml.MustParse("kind: B\n").YNode(), "a") // no metadata: no panic
}

// TestLookupAnnotationIsGetAnnotations: LookupAnnotation reads what kyaml's
// GetAnnotations map holds for the key, on objects written every way.
func TestLookupAnnotationIsGetAnnotations(t *testing.T) {
	for _, doc := range []string{
		"kind: A\n",
		"kind: A\nmetadata: {name: x}\n",
		"kind: A\nmetadata:\n  annotations: null\n",
		"kind: A\nmetadata:\n  annotations: {k: v, other: w}\n",
		"kind: A\nmetadata:\n  annotations: {k: ''}\n",
		"kind: A\nmetadata:\n  annotations: {k: null}\n",
		"kind: A\nmetadata:\n  annotations: {k: ~}\n",
		"kind: A\nmetadata:\n  annotations: {k: first, k: last}\n",
		"kind: A\nmetadata:\n  annotations: {k: {nested: map}}\n",
		"kind: A\nmetadata:\n  annotations: [k]\n",
		"kind: A\nmetadata: [annotations]\n",
		"kind: A\nmetadata:\n  annotations: [k, v]\n",
		"kind: A\nmetadata: [annotations, {k: v}]\n",
		"kind: A\nmetadata:\n  annotations: {other: v}\n",
	} {
		n, err := yaml.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := LookupAnnotation(n.YNode(), "k")
		if strings.Contains(doc, "[") {
			// A list where a map belongs: kyaml reads its items in
			// pairs or panics; here there are no annotations.
			if got != "" || ok {
				t.Errorf("%q: LookupAnnotation = %q, %v; want none", doc, got, ok)
			}
			continue
		}
		want, wantOK, panicked := getAnnotation(n, "k")
		if panicked {
			t.Fatalf("%q: kyaml panicked", doc)
		}
		if got != want || ok != wantOK {
			t.Errorf("%q: LookupAnnotation = %q, %v; GetAnnotations holds %q, %v", doc, got, ok, want, wantOK)
		}
	}
}

// getAnnotation is kyaml's read, and whether it panicked.
func getAnnotation(n *yaml.RNode, key string) (value string, ok, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	value, ok = n.GetAnnotations()[key]
	return value, ok, false
}

// TestSetAnnotationKeepsTheObjectsError: annotations written as null or
// empty become a map; a list or a string where the map belongs is the
// object's own error (the API server rejects it) and stays for the schema
// rules, not replaced by a map that would pass.
func TestSetAnnotationKeepsTheObjectsError(t *testing.T) {
	for doc, set := range map[string]bool{
		"kind: A\nmetadata:\n  annotations:\n":          true,
		"kind: A\nmetadata:\n  annotations: null\n":     true,
		"kind: A\nmetadata:\n  annotations: [a, b]\n":   false,
		"kind: A\nmetadata:\n  annotations: oops\n":     false,
		"kind: A\nmetadata: [annotations]\n":            false,
		"kind: A\nmetadata:\n  annotations: {a: '1'}\n": true,
	} {
		n := yaml.MustParse(doc)
		if got := SetAnnotation(n.YNode(), "k", "v"); got != set {
			t.Errorf("%q: SetAnnotation = %v, want %v:\n%s", doc, got, set, n.MustString())
		}
		if !set && n.MustString() != yaml.MustParse(doc).MustString() {
			t.Errorf("%q: the object's own value was changed:\n%s", doc, n.MustString())
		}
	}
}
