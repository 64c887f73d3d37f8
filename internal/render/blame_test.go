package render

import "testing"

func TestLineOf(t *testing.T) {
	data := []byte("# image: a:1\nspec:\n  containers:\n  - name: web\n    image: \"a:1\" # pinned later\n  - {name: b, image: b:2}\n- op: replace\n  value: c:3\n")
	for value, want := range map[string]int{"a:1": 5, "b:2": 6, "c:3": 8, "web": 4, "d:4": 0, "a": 0} {
		if got := lineOf(data, value); got != want {
			t.Errorf("lineOf(%q) = %d, want %d", value, got, want)
		}
	}
}
