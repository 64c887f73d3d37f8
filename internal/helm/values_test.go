package helm

import (
	"errors"
	"slices"
	"testing"
)

func TestFalseBools(t *testing.T) {
	got, err := FalseBools(blueGreen, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"bluegreen.autoPromotion"}; !slices.Equal(got, want) {
		t.Errorf("FalseBools = %v, want %v", got, want)
	}
	// The merged values count: --set turns one on and another off.
	got, err = FalseBools(blueGreen, Options{Set: []string{"bluegreen.autoPromotion=true", "metrics.enabled=false", "a.b=false"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.b", "metrics.enabled"}; !slices.Equal(got, want) {
		t.Errorf("FalseBools with --set = %v, want %v", got, want)
	}
	if _, err := FalseBools(t.TempDir(), Options{}); !errors.Is(err, ErrNotChart) {
		t.Errorf("a directory without Chart.yaml: %v, want ErrNotChart", err)
	}
}
