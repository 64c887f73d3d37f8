package waiver_test

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/waiver"
)

// FuzzParseAnnotation: a waiver annotation is pull request content. The
// parser never panics, and what it accepts has every required field.
func FuzzParseAnnotation(f *testing.F) {
	for _, s := range []string{
		"image-digest expires=2027-03-31 owner=team-shop reason=vendor publishes tags only",
		"image-digest,image-registry expires=2027-03-31 owner=a reason=b owner=c",
		"image-digest reason=x expires=2027-01-01 owner=me",
		"expires=2027-01-01",
		"image-digest expires=2027-13-01 owner=a reason=b",
		"image-digset owner=a",
		"image-digest  expires=2027-01-01\towner=a reason=",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := waiver.ParseAnnotation(s)
		if err != nil {
			return
		}
		if len(e.Rules) == 0 || e.Owner == "" || e.Reason == "" || e.Expires == "" {
			t.Fatalf("accepted %q without a required field: %+v", s, e)
		}
		if _, err := e.ExpiresAt(); err != nil {
			t.Fatalf("accepted %q with a bad date: %v", s, err)
		}
		for _, id := range e.Rules {
			if !strings.Contains(strings.Join(config.RuleIDs(), " "), id) {
				t.Fatalf("accepted unknown rule %q", id)
			}
		}
	})
}
