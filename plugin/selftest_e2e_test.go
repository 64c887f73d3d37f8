package plugin_test

import (
	"strings"
	"testing"
)

func TestE2ESelftest(t *testing.T) {
	r := gate(t, "", "selftest", "-k", "examples/overlays/prod")
	if r.Code != 0 {
		t.Fatalf("selftest on the prod overlay: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"render-empty", "replace a digest by :latest", "drop the digest, keep the tag", "move an image to another registry"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("selftest table lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "MISSED") {
		t.Errorf("a mutant passed:\n%s", r.Stdout)
	}
	// A baseline that fails cannot prove anything: exit 1, and say why.
	bad := gate(t, "", "selftest", "-k", "examples/overlays/prod-retag")
	if bad.Code != 1 || !strings.Contains(bad.Stderr, "does not pass") {
		t.Errorf("selftest on a failing render: exit %d\n%s%s", bad.Code, bad.Stdout, bad.Stderr)
	}
}

// TestE2ESelftestCatchesADisabledRule proves selftest goes red when the
// gate would let an outage through: with image-digest set to warning, the
// :latest mutant is only warned about, so the gate would pass it.
func TestE2ESelftestCatchesAWeakenedGate(t *testing.T) {
	r := gate(t, "", "selftest", "-k", "examples/overlays/prod", "--rule", "image-digest=warning")
	if r.Code != 1 || !strings.Contains(r.Stdout, "WARN") {
		t.Fatalf("selftest with image-digest as a warning: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
