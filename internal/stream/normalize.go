package stream

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxExpanded bounds the nodes that alias expansion may create in one
// document (~30 MB), as go-yaml bounds "excessive aliasing": real manifests
// expand a few hundred.
const maxExpanded = 200_000

// maxDepth bounds the nesting of one document.
const maxDepth = 1000

// Normalize rewrites one document's node tree to what kubectl decodes:
// aliases replaced by copies of their anchors, merge keys applied (keys
// written in the mapping win over merged ones; among merged mappings the
// first wins, as YAML 1.1 says), anchors dropped. A key written twice in
// one mapping is an error, as in kubectl's strict decoding and kustomize.
//
// An alias may only name an anchor of its own document: kubectl converts
// each document on its own, while a YAML stream decoder keeps anchors
// across documents.
func Normalize(n *yaml.RNode) error {
	w := &walk{budget: maxExpanded, anchors: map[*yaml.Node]bool{}}
	return w.normalize(n.YNode(), 0)
}

// walk is the state of one Normalize call.
type walk struct {
	budget  int
	anchors map[*yaml.Node]bool // anchored nodes seen so far in this document
}

func (w *walk) normalize(n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("line %d: nested deeper than %d levels", n.Line, maxDepth)
	}
	if n.Anchor != "" {
		w.anchors[n] = true
		n.Anchor = ""
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			r, err := w.resolved(c, depth)
			if err != nil {
				return err
			}
			n.Content[i] = r
		}
	case yaml.MappingNode:
		return w.normalizeMapping(n, depth)
	}
	return nil
}

// resolved returns c with aliases expanded, normalized.
func (w *walk) resolved(c *yaml.Node, depth int) (*yaml.Node, error) {
	if c.Kind == yaml.AliasNode {
		if c.Alias == nil || !w.anchors[c.Alias] {
			return nil, fmt.Errorf("line %d: unknown anchor %q referenced (an alias names an anchor of its own document)", c.Line, c.Value)
		}
		cp, err := w.deepCopy(c.Alias, depth)
		if err != nil {
			return nil, fmt.Errorf("line %d: expanding alias *%s: %w", c.Line, c.Value, err)
		}
		c = cp
	}
	return c, w.normalize(c, depth+1)
}

func (w *walk) normalizeMapping(n *yaml.Node, depth int) error {
	var merged [][]*yaml.Node // key/value pairs from merge keys, in order
	explicit := make([]*yaml.Node, 0, len(n.Content))
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode {
			r, err := w.resolved(k, depth)
			if err != nil {
				return err
			}
			k = r
		}
		v, err := w.resolved(v, depth)
		if err != nil {
			return err
		}
		if isMergeKey(k) {
			pairs, err := mergeSources(v, k.Line)
			if err != nil {
				return err
			}
			merged = append(merged, pairs...)
			continue
		}
		explicit = append(explicit, k, v)
	}
	if err := checkDuplicates(explicit); err != nil {
		return err
	}
	n.Content = applyMerges(explicit, merged)
	return nil
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!!merge" || k.Tag == "tag:yaml.org,2002:merge")
}

// mergeSources returns the key/value lists a merge key's value brings: a
// mapping, or a sequence of mappings (already normalized).
func mergeSources(v *yaml.Node, line int) ([][]*yaml.Node, error) {
	switch v.Kind {
	case yaml.MappingNode:
		return [][]*yaml.Node{v.Content}, nil
	case yaml.SequenceNode:
		var out [][]*yaml.Node
		for _, m := range v.Content {
			if m.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: a merge key takes mappings, got a %s", line, kindName(m))
			}
			out = append(out, m.Content)
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: a merge key takes a mapping or a list of mappings, got a %s", line, kindName(v))
}

// applyMerges adds merged pairs whose keys are not already present.
func applyMerges(explicit []*yaml.Node, merged [][]*yaml.Node) []*yaml.Node {
	if len(merged) == 0 {
		return explicit
	}
	seen := make(map[string]bool, len(explicit)/2)
	for i := 0; i < len(explicit); i += 2 {
		seen[keyOf(explicit[i])] = true
	}
	out := explicit
	for _, pairs := range merged {
		for i := 0; i+1 < len(pairs); i += 2 {
			if k := keyOf(pairs[i]); !seen[k] {
				seen[k] = true
				out = append(out, pairs[i], pairs[i+1])
			}
		}
	}
	return out
}

func checkDuplicates(pairs []*yaml.Node) error {
	n := len(pairs) / 2
	if n < 2 {
		return nil
	}
	if n <= 16 { // small mappings, the common case: no allocation
		for i := 0; i < len(pairs); i += 2 {
			for j := i + 2; j < len(pairs); j += 2 {
				if keyOf(pairs[i]) == keyOf(pairs[j]) {
					return duplicate(pairs[i], pairs[j])
				}
			}
		}
		return nil
	}
	seen := make(map[string]*yaml.Node, n)
	for i := 0; i < len(pairs); i += 2 {
		k := keyOf(pairs[i])
		if first, ok := seen[k]; ok {
			return duplicate(first, pairs[i])
		}
		seen[k] = pairs[i]
	}
	return nil
}

func duplicate(first, again *yaml.Node) error {
	return fmt.Errorf("line %d: key %q already defined at line %d (kubectl rejects duplicate keys)", again.Line, again.Value, first.Line)
}

// keyOf is a mapping key as kubectl's JSON conversion sees it.
func keyOf(k *yaml.Node) string {
	if k.Kind == yaml.ScalarNode {
		return k.Value
	}
	return fmt.Sprintf("\x00%d:%d", k.Line, k.Column) // complex keys never collide
}

// deepCopy copies a node tree, expanding aliases inside it, within budget.
func (w *walk) deepCopy(n *yaml.Node, depth int) (*yaml.Node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels (a recursive alias?)", maxDepth)
	}
	if w.budget--; w.budget < 0 {
		return nil, fmt.Errorf("excessive aliasing: more than %d nodes", maxExpanded)
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: alias *%s names no anchor", n.Line, n.Value)
		}
		return w.deepCopy(n.Alias, depth+1)
	}
	cp := *n
	cp.Anchor = ""
	if len(n.Content) > 0 {
		cp.Content = make([]*yaml.Node, len(n.Content))
		for i, c := range n.Content {
			var err error
			if cp.Content[i], err = w.deepCopy(c, depth+1); err != nil {
				return nil, err
			}
		}
	}
	return &cp, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

// NormalizeAll normalizes the items of one document (a ResourceList's),
// in order, so an alias may name an anchor of an earlier item.
func NormalizeAll(items []*yaml.RNode) error {
	w := &walk{budget: maxExpanded, anchors: map[*yaml.Node]bool{}}
	for i, n := range items {
		if err := w.normalize(n.YNode(), 0); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	return nil
}
