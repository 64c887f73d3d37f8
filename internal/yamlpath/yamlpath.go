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
// ("metadata.annotations.kubectl-gate.dev/waive").
func LineOf(doc *yaml.Node, path string) int {
	n, line := doc, doc.Line
	segs := segments(path)
	for i := 0; i < len(segs); i++ {
		var next, at *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			// The longest run of segments that names a key: "a.b" is one
			// key where the map has it, two segments where it does not.
			key := ""
			for j := i; j < len(segs) && next == nil; j++ {
				if j > i {
					key += "."
				}
				key += segs[j]
				for k := 0; k+1 < len(n.Content); k += 2 {
					if n.Content[k].Value == key {
						at, next = n.Content[k], n.Content[k+1]
						i = j
						break
					}
				}
			}
		case yaml.SequenceNode:
			if k, err := strconv.Atoi(segs[i]); err == nil && k >= 0 && k < len(n.Content) {
				next = n.Content[k]
				at = next
			}
		}
		if next == nil {
			break
		}
		n, line = next, at.Line
	}
	return line
}

// segments splits a field path into keys and indexes.
func segments(path string) []string {
	var out []string
	for len(path) > 0 {
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return append(out, path[1:])
			}
			out = append(out, path[1:end])
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			out = append(out, path[:end])
			path = path[end:]
		}
	}
	return out
}
