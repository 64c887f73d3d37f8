package yamlpath

import (
	"strings"
	"testing"
	"time"

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

// TestLineOf: the line of a field's key or list item, else of the nearest
// enclosing field written there; keys with dots as field.Path brackets
// them and as a dotted path writes them; a key without a line (a shared
// key of a released object) gives its parent's.
func TestLineOf(t *testing.T) {
	n := yaml.MustParse(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
    app: web
  annotations:
    a: one
    a.b: two
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
      - name: side
        image: busybox
`).YNode()
	for path, want := range map[string]int{
		"":                                        1,
		"spec.template.spec.containers[1].image":  18,
		"spec.template.spec.containers.1.image":   18,
		"spec.template.spec.containers[1]":        17,
		"spec.template.spec.containers[9].image":  14,
		"spec.template.spec.containers[x]":        14,
		"spec.template.spec.securityContext":      13,
		"metadata.labels[app.kubernetes.io/name]": 6,
		"metadata.labels.app.kubernetes.io/name":  6,
		"metadata.labels.app":                     7,
		"metadata.annotations.a":                  9,
		"metadata.annotations.a.b":                10,
		"metadata.annotations[a.b]":               10,
		"metadata.annotations.a.c":                9, // "a", then no "c" under its scalar
		"metadata[":                               3,
		"..spec..template":                        12,
		"]]":                                      1,
	} {
		if got := LineOf(n, path); got != want {
			t.Errorf("LineOf(%q) = %d, want %d", path, got, want)
		}
	}
	// A key without a line gives the line of the field that holds it.
	n.Content[5].Content[0].Line = 0 // metadata's "name" key
	if got := LineOf(n, "metadata.name"); got != 3 {
		t.Errorf("a key without a line: %d, want 3", got)
	}
}

// TestLineOfLongKeys: a key of hundreds of thousands of dotted segments,
// which a pull request can write in a custom resource's spec, is matched
// in time linear in its length (joining segments one by one took 20 s).
func TestLineOfLongKeys(t *testing.T) {
	long := strings.Repeat("a.", 320_000) + "a"
	n := yaml.MustParse("kind: Widget\nspec:\n  ? " + long + "\n  : containers:\n    - image: nginx\n").YNode()
	start := time.Now()
	if got := LineOf(n, "spec."+long+".containers[0].image"); got != 5 {
		t.Errorf("LineOf = %d, want 5", got)
	}
	if got := LineOf(n, "spec."+long+"x.containers[0].image"); got != 2 {
		t.Errorf("a key that is not there: %d, want 2", got)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v", took)
	}
}
