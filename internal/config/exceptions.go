package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ExpiresLayout is the layout of an exception's expires date (YYYY-MM-DD).
const ExpiresLayout = "2006-01-02"

// Exception waives findings of some rules on some objects, accountably: who
// owns the waiver, why, and until when. Only the trusted config's
// exceptions count (an in-tree Gate's are ignored, see Tighten). An entry
// past its expiry waives nothing and is itself an error finding
// (exception-expired); one that waived nothing in a run is a warning
// (exception-unused).
//
//	exceptions:
//	- rules: [image-digest]
//	  match: {kind: Deployment, namespace: shop, name: legacy-worker}
//	  reason: "vendor image is only published by tag; ticket OPS-123"
//	  owner: team-shop
//	  expires: 2027-03-31
type Exception struct {
	// Rules are the rule ids the entry waives.
	Rules []string `json:"rules"`
	// Match says which findings: every field given must match.
	Match ExceptionMatch `json:"match"`
	// Reason says why the findings are accepted.
	Reason string `json:"reason"`
	// Owner is who answers for the waiver.
	Owner string `json:"owner"`
	// Expires is the last day (UTC, YYYY-MM-DD) the entry waives anything.
	Expires string `json:"expires"`
}

// ExceptionMatch selects findings by the object they are about and the Argo
// CD Application or Flux object whose render holds it. Empty fields match
// anything; at least one must be set.
type ExceptionMatch struct {
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// App is an Argo CD Application or Flux Kustomization/HelmRelease, as
	// "name" or "namespace/name": findings in its render and on the object
	// itself.
	App string `json:"app,omitempty"`
}

// Empty reports whether no match field is set.
func (m ExceptionMatch) Empty() bool { return m == ExceptionMatch{} }

// ExpiresAt returns the first instant the exception no longer waives: the
// day after Expires, at midnight UTC.
func (e Exception) ExpiresAt() (time.Time, error) {
	d, err := time.Parse(ExpiresLayout, e.Expires)
	if err != nil {
		return time.Time{}, fmt.Errorf("expires: %q is not YYYY-MM-DD", e.Expires)
	}
	return d.AddDate(0, 0, 1), nil
}

// Name names the entry in messages: "spec.exceptions[2] (owner team-a)".
func (e Exception) Name(i int) string {
	s := fmt.Sprintf("spec.exceptions[%d]", i)
	if e.Owner != "" {
		s += " (owner " + e.Owner + ")"
	}
	return s
}

// validateExceptions checks every entry: rules, reason, owner, expires and
// one match field are required, so no waiver is anonymous or permanent.
func (s *Spec) validateExceptions(ruleIDs []string) error {
	var errs []error
	for i, e := range s.Exceptions {
		var missing []string
		if len(e.Rules) == 0 {
			missing = append(missing, "rules")
		}
		if e.Match.Empty() {
			missing = append(missing, "match (one of kind, namespace, name, app)")
		}
		for _, f := range []struct{ name, v string }{{"reason", e.Reason}, {"owner", e.Owner}, {"expires", e.Expires}} {
			if strings.TrimSpace(f.v) == "" {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("%s: %s required", e.Name(i), strings.Join(missing, ", ")))
		}
		if e.Expires != "" {
			if _, err := e.ExpiresAt(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", e.Name(i), err))
			}
		}
		for _, id := range e.Rules {
			if !slices.Contains(ruleIDs, id) {
				errs = append(errs, fmt.Errorf("%s: rules: unknown rule id %q", e.Name(i), id))
			}
		}
	}
	for _, id := range s.Unwaivable {
		if !slices.Contains(ruleIDs, id) {
			errs = append(errs, fmt.Errorf("spec.rules.%s: unknown rule id", id))
		}
	}
	return errors.Join(errs...)
}

// Waivable reports whether the config lets findings of rule id be waived
// (spec.rules.<id>.waivable). Rules that can never be waived (no verdict,
// render-empty, gate-placement) are decided by the engine, not here.
func (s *Spec) Waivable(id string) bool { return !slices.Contains(s.Unwaivable, id) }

// ruleSettings rewrites the long form of spec.rules entries,
// `<id>: {severity: error, waivable: false}`, into the short form
// `<id>: error` the Spec holds, and returns the ids made unwaivable. An
// entry without severity keeps the rule's default severity.
func ruleSettings(doc *yaml.Node) ([]string, error) {
	rules := child(child(doc, "spec"), "rules")
	if rules == nil || rules.Kind != yaml.MappingNode {
		return nil, nil
	}
	var unwaivable []string
	var kept []*yaml.Node
	for i := 0; i+1 < len(rules.Content); i += 2 {
		key, val := rules.Content[i], rules.Content[i+1]
		if val.Kind != yaml.MappingNode {
			kept = append(kept, key, val)
			continue
		}
		var severity *yaml.Node
		for j := 0; j+1 < len(val.Content); j += 2 {
			k, v := val.Content[j].Value, val.Content[j+1]
			switch k {
			case "severity":
				severity = v
			case "waivable":
				if v.Kind != yaml.ScalarNode || (v.Value != "true" && v.Value != "false") {
					return nil, fmt.Errorf("spec.rules.%s.waivable: %q is not true or false", key.Value, v.Value)
				}
				if v.Value == "false" {
					unwaivable = append(unwaivable, key.Value)
				}
			default:
				return nil, fmt.Errorf("unknown field %q (a typo here would silently disable a check)", "spec.rules."+key.Value+"."+k)
			}
		}
		if severity != nil {
			kept = append(kept, key, severity)
		}
	}
	rules.Content = kept
	return unwaivable, nil
}

// child returns the value of key in a mapping (or a document's mapping).
func child(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
