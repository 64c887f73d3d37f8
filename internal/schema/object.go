package schema

import (
	"math"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// toUnstructured converts a YAML node into the JSON data model the API
// server validates (map[string]any, []any, string, int64, float64, bool,
// nil), recording each duplicate mapping key with its field path: a strict
// create rejects those ("duplicate field"), while a plain YAML decoder keeps
// the last value silently.
func toUnstructured(n *yaml.Node) (any, []string) {
	c := converter{}
	v := c.value(n)
	return v, c.dups
}

// converter converts one document. path holds the segments from the root to
// the value being converted: the field path string is built only for a
// duplicate key, not for every field.
type converter struct {
	dups []string
	path []segment
}

// segment is a mapping key, or with index ≥ 0 an item of a sequence.
type segment struct {
	key   string
	index int
}

func (c *converter) pathString() string {
	var b strings.Builder
	for i, seg := range c.path {
		switch {
		case seg.index >= 0:
			b.WriteString("[" + strconv.Itoa(seg.index) + "]")
		case i > 0:
			b.WriteString("." + seg.key)
		default:
			b.WriteString(seg.key)
		}
	}
	return b.String()
}

func (c *converter) value(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.value(n.Content[0])
	case yaml.AliasNode:
		return c.value(n.Alias)
	case yaml.MappingNode:
		return c.mapping(n)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, item := range n.Content {
			c.path = append(c.path, segment{index: i})
			out[i] = c.value(item)
			c.path = c.path[:len(c.path)-1]
		}
		return out
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil
}

func (c *converter) mapping(n *yaml.Node) map[string]any {
	out := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			if merged, ok := c.value(v).(map[string]any); ok {
				for mk, mv := range merged {
					if _, set := out[mk]; !set {
						out[mk] = mv
					}
				}
			}
			continue
		}
		key := k.Value
		c.path = append(c.path, segment{key: key, index: -1})
		if _, dup := out[key]; dup {
			c.dups = append(c.dups, c.pathString())
		}
		out[key] = c.value(v)
		c.path = c.path[:len(c.path)-1]
	}
	return out
}

// scalar resolves a scalar the way yaml.v3 (and so kustomize's output)
// does: the node's resolved tag decides the JSON type.
func scalar(n *yaml.Node) any {
	v := n.Value
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(v))
		if err != nil {
			return v
		}
		return b
	case "!!int":
		s := strings.ReplaceAll(v, "_", "")
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimLeft(s, "+-")
		if rest, ok := strings.CutPrefix(s, "0o"); ok {
			s = "0" + rest
		}
		if u, err := strconv.ParseUint(s, 0, 64); err == nil {
			if neg && u <= 1<<63 {
				return -int64(u)
			}
			if !neg && u <= math.MaxInt64 {
				return int64(u)
			}
		}
		if f, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64); err == nil {
			return f
		}
		return v
	case "!!float":
		switch strings.ToLower(strings.TrimLeft(v, "+")) {
		case ".inf":
			return math.Inf(1)
		case "-.inf":
			return math.Inf(-1)
		case ".nan":
			return math.NaN()
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
		if err != nil {
			return v
		}
		return f
	}
	return v
}
