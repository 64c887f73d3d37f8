package waiver

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
)

// Annotation is the object annotation that waives its own findings when
// the trusted config sets spec.exceptionsFromAnnotations:
//
//	kubectl-gate.dev/waive: "image-digest,image-registry expires=2027-03-31 owner=team-shop reason=vendor publishes tags only"
//
// The rule list comes first, then key=value fields; reason= takes the rest
// of the line, so it comes last.
const Annotation = "kubectl-gate.dev/waive"

// maxAnnotation bounds what the parser reads: an annotation is PR content.
const maxAnnotation = 4096

// ParseAnnotation reads a waiver annotation's value. Every field is
// required; rule ids must be known (config.RuleIDs). The value is pull
// request content: an error names what is wrong, never panics.
func ParseAnnotation(value string) (config.Exception, error) {
	var e config.Exception
	if len(value) > maxAnnotation {
		return e, fmt.Errorf("longer than %d bytes", maxAnnotation)
	}
	rest := strings.TrimSpace(value)
	if rest == "" {
		return e, errors.New("empty; want \"<rule>[,<rule>] expires=YYYY-MM-DD owner=<who> reason=<text>\"")
	}
	first, rest, _ := strings.Cut(rest, " ")
	if strings.Contains(first, "=") {
		return e, fmt.Errorf("%q: the rule ids come first", first)
	}
	known := config.RuleIDs()
	for id := range strings.SplitSeq(first, ",") {
		if !slices.Contains(known, id) {
			return e, fmt.Errorf("unknown rule id %q", id)
		}
		e.Rules = append(e.Rules, id)
	}
	seen := map[string]bool{}
	for rest = strings.TrimLeft(rest, " \t"); rest != ""; rest = strings.TrimLeft(rest, " \t") {
		key, val, ok := strings.Cut(rest, "=")
		if !ok || strings.ContainsAny(key, " \t") {
			return e, fmt.Errorf("%q is not key=value", firstField(rest))
		}
		if seen[key] {
			return e, fmt.Errorf("%s= given twice", key)
		}
		seen[key] = true
		if key == "reason" {
			e.Reason, rest = strings.TrimSpace(val), ""
			continue
		}
		val, rest, _ = strings.Cut(val, " ")
		switch key {
		case "expires":
			e.Expires = val
		case "owner":
			e.Owner = val
		default:
			return e, fmt.Errorf("unknown field %s= (want expires=, owner=, reason=)", key)
		}
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"expires", e.Expires}, {"owner", e.Owner}, {"reason", e.Reason}} {
		if f.v == "" {
			missing = append(missing, f.name+"=")
		}
	}
	if len(missing) > 0 {
		return e, fmt.Errorf("%s required", strings.Join(missing, ", "))
	}
	if _, err := time.Parse(config.ExpiresLayout, e.Expires); err != nil {
		return e, fmt.Errorf("expires=%q is not YYYY-MM-DD", e.Expires)
	}
	return e, nil
}

func firstField(s string) string {
	f, _, _ := strings.Cut(s, " ")
	return f
}
