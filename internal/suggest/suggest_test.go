package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"shop-prod", "argocd/shop-prod", "blog", "argocd/blog"}
	for s, want := range map[string]string{"shop-prdo": "shop-prod", "Blog": "blog", "argocd/shpo-prod": "argocd/shop-prod", "zzzzzz": ""} {
		if got := Closest(s, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", s, got, want)
		}
	}
	if p := Phrase("blgo", names); p != ` (did you mean "blog"?)` {
		t.Errorf("Phrase: %q", p)
	}
	if p := Phrase("blog", names); p != "" {
		t.Errorf("Phrase of an exact name: %q", p)
	}
}
