package schema

import (
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestDuplicatePaths: a duplicate key is reported at its field path, keys
// joined by dots and sequence items as [i], wherever it is nested.
func TestDuplicatePaths(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want []string
	}{
		{"a: 1\na: 2\n", []string{"a"}},
		{"a: {b: 1, b: 2}\n", []string{"a.b"}},
		{"a: [x, {b: 1, c: 2, b: 3}]\n", []string{"a[1].b"}},
		{"a: [[{b: 1}], [{b: 1, b: 2}]]\n", []string{"a[1][0].b"}},
		{"spec:\n  template:\n    spec:\n      containers:\n      - name: a\n      - name: b\n        image: x\n        image: y\n", []string{"spec.template.spec.containers[1].image"}},
		{"'[a]': {b: 1, b: 2}\n'[a]': 3\n", []string{"[a].b", "[a]"}},
		{"a: {b: 1}\nc: [1, 2]\n", nil},
	} {
		n, err := yaml.Parse(tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		_, dups := toUnstructured(n.YNode())
		if !slices.Equal(dups, tc.want) {
			t.Errorf("%q: duplicates at %q, want %q", tc.doc, dups, tc.want)
		}
	}
}
