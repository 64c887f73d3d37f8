package stream

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kubectl reads YAML as YAML 1.1: sigs.k8s.io/yaml (YAMLToJSON, which
// cli-runtime's -f reader, Helm's install and Argo CD's repo-server call)
// decodes with go-yaml v2, whose resolver takes the plain scalars
// y/yes/on/n/no/off (in their case variants) for booleans. The gate, like
// kustomize, reads with go-yaml v3 (YAML 1.2), where they are strings. So
// `tier: on` is the string "on" to the gate and true to kubectl: the API
// server then refuses a boolean label, or a field silently takes another
// value. The other YAML 1.1 forms resolve alike in both (go-yaml v3 keeps
// 0777 octal, 1_000 and 0b101 for compatibility; neither reads sexagesimal
// 1:30; timestamps stay strings when decoded into interface{}):
// TestYAML11AsKubectl holds every case to sigs.k8s.io/yaml.
//
// Keys go through sigs.k8s.io/yaml's own conversion to JSON
// (convertToJSONableObject): a key that is not a string is written as one,
// a boolean as "true"/"false", an integer in decimal, a float as go-yaml
// formats a float32 ('g', -1, 32: 0.1234567891 is "0.12345679"); a null
// key or one above MaxInt64 is an error.
//
// kustomize's renders are not read so: kyaml quotes such strings when it
// writes them (`tier: "on"`), so a render never holds a plain on; and the
// KRM function's ResourceList is kustomize's, read as kustomize reads it.

// bool11 holds the plain scalars go-yaml v2 resolves to booleans
// (resolve.go resolveMapList), true/false included.
var bool11 = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"true": true, "True": true, "TRUE": true,
	"on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false,
	"false": false, "False": false, "FALSE": false,
	"off": false, "Off": false, "OFF": false,
}

// yamlStyleFloat is go-yaml v2's (resolve.go).
var yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// resolve11 resolves a plain scalar as go-yaml v2 does (resolve.go resolve
// with no tag) into the value sigs.k8s.io/yaml converts: its short tag and
// a bool, nil, int64, uint64, float64 or string. A timestamp is
// "!!timestamp" and stays its string, as v2 decodes it into interface{}.
func resolve11(s string) (string, any) {
	if len(s) > 5 && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		// most scalars of a manifest: longer than any word below, and a
		// letter first is neither a number nor a time
		return "!!str", s
	}
	if b, ok := bool11[s]; ok {
		return "!!bool", b
	}
	switch s {
	case "", "~", "null", "Null", "NULL":
		return "!!null", nil
	case ".nan", ".NaN", ".NAN":
		return "!!float", math.NaN()
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return "!!float", math.Inf(1)
	case "-.inf", "-.Inf", "-.INF":
		return "!!float", math.Inf(-1)
	case "<<":
		return "!!merge", s
	}
	switch c := s[0]; {
	case c == '.':
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return "!!float", f
		}
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		if !mayBeNumber(s) {
			return "!!str", s // 100m, 128Mi, --wait: quickly, without failed parses
		}
		if isTimestamp(s) {
			return "!!timestamp", s
		}
		plain := strings.ReplaceAll(s, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return "!!int", i
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return "!!int", u
		}
		if yamlStyleFloat.MatchString(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return "!!float", f
			}
		}
		if rest, ok := strings.CutPrefix(plain, "0b"); ok {
			if i, err := strconv.ParseInt(rest, 2, 64); err == nil {
				return "!!int", i
			}
			if u, err := strconv.ParseUint(rest, 2, 64); err == nil {
				return "!!int", u
			}
		} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
			if i, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
				return "!!int", i
			}
		}
	}
	return "!!str", s
}

// mayBeNumber reports whether every byte of s can be part of an integer,
// a float or a timestamp (numberByte, fastyaml.go).
func mayBeNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		if !numberByte[s[i]] {
			return false
		}
	}
	return true
}

// isTimestamp is go-yaml v2's parseTimestamp: YYYY- then one of its
// formats.
func isTimestamp(s string) bool {
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, f := range []string{"2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00", "2006-1-2 15:4:5.999999999", "2006-1-2"} {
		if _, err := time.Parse(f, s); err == nil {
			return true
		}
	}
	return false
}

// plainScalar reports whether n is a scalar written plain, with no tag:
// the scalars YAML 1.1 and 1.2 resolve by their text.
func plainScalar(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Style == 0
}

// taggedBool reports whether n is written `!!bool yes`: go-yaml v2 takes
// every spelling of its table, v3 (and the gate's reading of the node)
// only true and false.
func taggedBool(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Style&yaml.TaggedStyle != 0 && n.ShortTag() == "!!bool"
}

// value11 gives a value scalar the type and value kubectl sends for it,
// where YAML 1.1 resolves it otherwise than the node's YAML 1.2 tag: `on`
// becomes the boolean true, written back as such. A float JSON cannot
// hold (.inf, .nan) is an error: kubectl cannot send it.
func value11(n *yaml.Node) error {
	if taggedBool(n) {
		if b, ok := bool11[n.Value]; ok {
			n.Value = strconv.FormatBool(b)
		}
		return nil
	}
	if !plainScalar(n) {
		return nil
	}
	tag, v := resolve11(n.Value)
	if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return fmt.Errorf("line %d: %s is not a number JSON can hold: kubectl cannot send it (quote it for a string)", n.Line, n.Value)
	}
	if tag == n.ShortTag() {
		return nil
	}
	switch v := v.(type) {
	case bool:
		n.Value = strconv.FormatBool(v)
	case nil:
		n.Value = "null"
	case int64:
		n.Value = strconv.FormatInt(v, 10)
	case uint64:
		n.Value = strconv.FormatUint(v, 10)
	case float64:
		n.Value = strconv.FormatFloat(v, 'g', -1, 64)
	}
	n.Tag = tag
	if tag == "!!timestamp" {
		n.Tag = "!!str"
	}
	return nil
}

// key11 gives a mapping key the string kubectl's JSON holds for it
// (sigs.k8s.io/yaml convertToJSONableObject over go-yaml v2's value): a
// key `on` is "true", `0777` is "511". A null key, or an integer above
// MaxInt64, is an error, as in kubectl. A key that changes is written back
// quoted, as the string it now is.
func key11(k *yaml.Node) error {
	var s string
	switch {
	case taggedBool(k):
		b, ok := bool11[k.Value]
		if !ok {
			return nil
		}
		s = strconv.FormatBool(b)
	case plainScalar(k):
		_, v := resolve11(k.Value)
		switch v := v.(type) {
		case bool:
			s = strconv.FormatBool(v)
		case nil:
			return fmt.Errorf("line %d: key %q is null, which kubectl cannot decode (quote it for a string)", k.Line, k.Value)
		case int64:
			s = strconv.FormatInt(v, 10)
		case uint64:
			return fmt.Errorf("line %d: key %s is an integer above %d, which kubectl cannot decode (quote it for a string)", k.Line, k.Value, int64(math.MaxInt64))
		case float64:
			s = strconv.FormatFloat(v, 'g', -1, 32)
			switch s {
			case "+Inf":
				s = ".inf"
			case "-Inf":
				s = "-.inf"
			case "NaN":
				s = ".nan"
			}
		default: // a string, a timestamp, a merge key (its caller's)
			return nil
		}
	default:
		return nil
	}
	if s != k.Value { // `10:` and `true:` stay as written: the same key
		k.Value, k.Tag, k.Style = s, "!!str", yaml.DoubleQuotedStyle
	}
	return nil
}

// ResolveAsKubectl resolves the plain scalars of a tree read otherwise, as
// Parse does (value11, key11): for Helm's output, which helm install
// (kube.Client.Build: cli-runtime's reader), Argo CD's repo-server and
// Flux's helm-controller decode with sigs.k8s.io/yaml, as YAML 1.1. Not
// for kustomize's helmCharts, which kustomize reads as YAML 1.2. A key
// made the same as another (`on:` beside "true":) is an error, as a key
// written twice.
func ResolveAsKubectl(n *yaml.RNode) error {
	return resolveTree(n.YNode(), 0)
}

func resolveTree(n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("line %d: nested deeper than %d levels", n.Line, maxDepth)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return value11(n)
	case yaml.MappingNode:
		changed := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && !isMergeKey(k) {
				was := k.Value
				if err := key11(k); err != nil {
					return err
				}
				changed = changed || k.Value != was
			}
			if err := resolveTree(n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		if changed {
			return checkDuplicates(n.Content)
		}
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if err := resolveTree(c, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// QuoteForKubectl marks the strings of a tree that YAML 1.1 would read as
// something else to be written quoted: kyaml's encoder writes the string
// "on" (a kustomize render of `tier: on`, or of `tier: "on"`) plain, which
// kubectl apply -f then reads as the boolean true. kustomize build writes
// it quoted (through JSON and sigs.k8s.io/yaml); a render the gate prints
// for kubectl (render, pin) must too. Only the style changes.
func QuoteForKubectl(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		if n.Style == 0 && n.ShortTag() == "!!str" {
			if _, ok := bool11[n.Value]; ok {
				n.Style = yaml.DoubleQuotedStyle
			}
		}
		return
	}
	for _, c := range n.Content {
		QuoteForKubectl(c)
	}
}
