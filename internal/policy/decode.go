package policy

import (
	"math"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fastUnstructured builds, straight from the node tree, what
// toUnstructured's JSON round trip (kyaml MarshalJSON, then the API
// machinery's JSON decoder) builds, for documents made only of string-keyed
// mappings, sequences and plain scalars of the YAML core schema: a string,
// a decimal integer, a decimal float, a bool or a null. ok is false for
// anything else (aliases, merge keys, duplicate keys, other tags, other
// number notations, NaN and infinities); the caller then takes the round
// trip, so the outcome never depends on which path ran.
//
// Numbers follow the round trip: JSON has no integer/float distinction, and
// the decoder makes int64 of what has no fraction or exponent once printed;
// Go prints an integral float64 below 1e21 without either.
func fastUnstructured(n *yaml.Node) (any, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" || reEmittedOtherwise(k) {
				return nil, false
			}
			if _, dup := m[k.Value]; dup {
				return nil, false
			}
			val, ok := fastUnstructured(v)
			if !ok {
				return nil, false
			}
			m[k.Value] = val
		}
		return m, true
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, item := range n.Content {
			val, ok := fastUnstructured(item)
			if !ok {
				return nil, false
			}
			s[i] = val
		}
		return s, true
	case yaml.ScalarNode:
		return fastScalar(n)
	}
	return nil, false
}

func fastScalar(n *yaml.Node) (any, bool) {
	v := n.Value
	switch n.Tag {
	case "!!str":
		if reEmittedOtherwise(n) {
			return nil, false
		}
		return v, true
	case "!!null":
		// Only the plain spellings: kyaml's JSON makes "" of an empty
		// value, and an explicit !!null on anything else is an error.
		switch v {
		case "~", "null", "Null", "NULL":
			return nil, true
		}
	case "!!bool":
		switch v {
		case "true", "True", "TRUE":
			return true, true
		case "false", "False", "FALSE":
			return false, true
		}
	case "!!int":
		if !decimal(v, false) {
			return nil, false
		}
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			return i, true
		}
	case "!!float":
		if !decimal(v, true) {
			return nil, false
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		if f == math.Trunc(f) && math.Abs(f) < 1e18 {
			return int64(f), true
		}
		if f == math.Trunc(f) {
			return nil, false // large integral values: leave to the round trip
		}
		return f, true
	}
	return nil, false
}

// decimal reports whether s is an optionally signed run of digits, with a
// fraction and an exponent when float is set: no "0x", "0o", "_", ".inf",
// and no leading zero before another digit ("0644" is YAML 1.1 octal to
// the round trip, 420).
func decimal(s string, float bool) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if s == "" || (len(s) > 1 && s[0] == '0' && s[1] >= '0' && s[1] <= '9') {
		return false
	}
	digits := false
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case float && (c == '.' || c == 'e' || c == 'E'):
		case float && (c == '-' || c == '+') && i > 0 && (s[i-1] == 'e' || s[i-1] == 'E'):
		default:
			return false
		}
	}
	return digits
}

// reEmittedOtherwise reports whether the round trip's YAML encoder changes
// a string scalar's value: go-yaml writes a folded scalar (">") with a
// more-indented line (one that starts with a space or a tab) so that it
// reads back with an extra line break ("a\n b" becomes "a\n\n b"). The
// object kustomize prints, and kubectl sends, holds the changed value; the
// round trip decides it (found by FuzzFastUnstructured).
func reEmittedOtherwise(n *yaml.Node) bool {
	if n.Style&yaml.FoldedStyle == 0 {
		return false
	}
	for line := range strings.SplitSeq(n.Value, "\n") {
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			return true
		}
	}
	return false
}
