// Package yamlpath reads fields of parsed YAML nodes directly, without
// kyaml's filter pipeline: on a 10,000-object render the pipeline's
// allocations dominate a check, and these reads allocate nothing.
package yamlpath

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Get returns the node at a path of map keys, or nil.
func Get(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = Field(n, k)
		if n == nil {
			return nil
		}
	}
	return n
}

// Field returns the value of one key of a mapping node, or nil.
func Field(n *yaml.Node, key string) *yaml.Node {
	n = mapping(n)
	if n == nil {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Dotted returns the node at a dotted path ("spec.template.spec").
func Dotted(n *yaml.Node, path string) *yaml.Node {
	for path != "" {
		k, rest, _ := strings.Cut(path, ".")
		n = Field(n, k)
		if n == nil {
			return nil
		}
		path = rest
	}
	return n
}

// String returns the scalar value at a dotted path, or "".
func String(n *yaml.Node, path string) string {
	v := Dotted(n, path)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}

// Annotation returns one annotation of an object, or "".
func Annotation(n *yaml.Node, key string) string {
	v := Field(Get(n, "metadata", "annotations"), key)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}

// LookupAnnotation returns one annotation of an object and whether the
// object has it, as kyaml's GetAnnotations map holds it (the value as
// written, the last of repeated keys) without building the map. Where
// metadata or annotations is a list, kyaml reads its items in pairs (or
// panics on an odd count); here such an object has no annotations.
func LookupAnnotation(n *yaml.Node, key string) (value string, ok bool) {
	annos := Get(n, "metadata", "annotations")
	if annos == nil || annos.Kind != yaml.MappingNode {
		return "", false
	}
	for i := 0; i+1 < len(annos.Content); i += 2 {
		if annos.Content[i].Value == key {
			value, ok = annos.Content[i+1].Value, true
		}
	}
	return value, ok
}

// SetAnnotation sets one annotation of an object node, creating metadata
// and annotations as needed. It reports false when n is not a mapping.
func SetAnnotation(n *yaml.Node, key, value string) bool {
	md := child(n, "metadata")
	annos := child(md, "annotations")
	if annos == nil {
		return false
	}
	if v := Field(annos, key); v != nil {
		v.Kind, v.Tag, v.Value, v.Style = yaml.ScalarNode, "!!str", value, 0
		return true
	}
	annos.Content = append(annos.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
	return true
}

// child returns the mapping under key, creating it when absent.
func child(n *yaml.Node, key string) *yaml.Node {
	n = mapping(n)
	if n == nil {
		return nil
	}
	if v := Field(n, key); v != nil {
		switch {
		case v.Kind == yaml.MappingNode:
		case v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == ""):
			// "annotations: null" or "annotations:": make it a map.
			v.Kind, v.Tag, v.Value, v.Content = yaml.MappingNode, "!!map", "", nil
		default:
			// A list or a string where a map belongs is the object's
			// own error, which the API server rejects: it stays for the
			// schema rules to report, not overwritten by a map.
			return nil
		}
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

// mapping returns n, or the content of a document node, when it is a
// mapping; else nil.
func mapping(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

// DeleteAnnotation removes one annotation, and the annotations map when it
// is left empty.
func DeleteAnnotation(n *yaml.Node, key string) {
	md := Field(n, "metadata")
	annos := mapping(Field(md, "annotations"))
	if annos == nil {
		return
	}
	for i := 0; i+1 < len(annos.Content); i += 2 {
		if annos.Content[i].Value == key {
			annos.Content = append(annos.Content[:i], annos.Content[i+2:]...)
			break
		}
	}
	if len(annos.Content) == 0 {
		md = mapping(md)
		for i := 0; i+1 < len(md.Content); i += 2 {
			if md.Content[i].Value == "annotations" {
				md.Content = append(md.Content[:i], md.Content[i+2:]...)
				return
			}
		}
	}
}

// LineOf returns the line of the field at path in an object's node (the
// line of its key, or of its list item), or of the nearest enclosing field
// written there; the object's first line for an empty path. The path is
// written as k8s.io/apimachinery's field.Path writes it
// ("spec.containers[0].env[1].name", "metadata.labels[app.kubernetes.io/name]");
// a map key with dots may also be written after a dot
// ("metadata.annotations.kubectl-gate.dev/waive"). Its cost is linear in
// the path and the keys it compares, however long either is.
func LineOf(doc *yaml.Node, path string) int {
	line := doc.Line
	for _, s := range Steps(doc, path) {
		if s.At.Line > 0 {
			line = s.At.Line
		}
	}
	return line
}

// Step is one field of a path resolved in a node: a mapping's key (Index
// -1) or a list's item.
type Step struct {
	Key   string
	Index int
	// At is the key's node, or the list item; Node is the field's value
	// (the item itself for a list).
	At, Node *yaml.Node
}

// Steps resolves a field path (as LineOf reads it) in n, as far as n holds
// it: one step for each field, the last the deepest field n writes.
func Steps(n *yaml.Node, path string) []Step {
	var out []Step
	rest := path
	for {
		rest = strings.TrimLeft(rest, ".")
		if rest == "" {
			return out
		}
		var seg string // a bracketed key or index
		bracket := rest[0] == '['
		if bracket {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				seg, rest = rest[1:], ""
			} else {
				seg, rest = rest[1:end], rest[end+1:]
			}
		}
		var next, at *yaml.Node
		index := -1
		switch n.Kind {
		case yaml.MappingNode:
			for k := 0; k+1 < len(n.Content); k += 2 {
				key := n.Content[k].Value
				if bracket {
					if key == seg {
						at, next = n.Content[k], n.Content[k+1]
						break
					}
					continue
				}
				// The longest key the path starts with, ending where a
				// segment ends: "a.b" before "a" for "a.b.c" (field.Path
				// brackets a key with dots; a path that writes one after a
				// dot, as for an annotation, means the whole key).
				if key != "" && strings.HasPrefix(rest, key) && (len(rest) == len(key) || rest[len(key)] == '.' || rest[len(key)] == '[') &&
					(at == nil || len(key) > len(at.Value)) {
					at, next = n.Content[k], n.Content[k+1]
				}
			}
			if next != nil && !bracket {
				rest = rest[len(at.Value):]
			}
		case yaml.SequenceNode:
			if !bracket { // "containers.0"
				end := strings.IndexAny(rest, ".[")
				if end < 0 {
					end = len(rest)
				}
				seg, rest = rest[:end], rest[end:]
			}
			if k, err := strconv.Atoi(seg); err == nil && k >= 0 && k < len(n.Content) {
				next, at, index = n.Content[k], n.Content[k], k
			}
		}
		if next == nil {
			return out
		}
		s := Step{Index: index, At: at, Node: next}
		if index < 0 {
			s.Key = at.Value
		}
		out = append(out, s)
		n = next
	}
}
