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
// aliases replaced by copies of their anchors, merge keys applied where
// they stand, as kubectl's go-yaml v2 applies them ([applyMerges]: a later
// pair overwrites an earlier one, merged or written), anchors dropped. A
// key written twice in one mapping is an error, as in kubectl's strict
// decoding and kustomize.
//
// An alias may only name an anchor of its own document: kubectl converts
// each document on its own, while a YAML stream decoder keeps anchors
// across documents.
//
// Scalars are left as go-yaml v3 resolved them (YAML 1.2, kustomize's
// reading): [Parse] also resolves them as kubectl does (yaml11.go).
func Normalize(n *yaml.RNode) error {
	return normalize(n, false)
}

// normalize is Normalize; yaml11 also resolves plain scalars, values and
// keys, as kubectl's YAML 1.1 reader does (value11, key11).
func normalize(n *yaml.RNode, yaml11 bool) error {
	w := &walk{budget: maxExpanded, anchors: map[*yaml.Node]bool{}, yaml11: yaml11}
	return w.normalize(n.YNode(), 0)
}

// walk is the state of one Normalize call.
type walk struct {
	budget  int
	anchors map[*yaml.Node]bool // anchored nodes seen so far in this document
	yaml11  bool                // resolve plain scalars as kubectl does
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
	case yaml.ScalarNode:
		if w.yaml11 {
			return value11(n)
		}
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
	var merges []int // indexes in n.Content of the merge keys, if any
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		// A merge key is a "<<" written as such: an alias of a "<<" scalar
		// is a key named "<<" (go-yaml v2 isMerge looks at the key node).
		if isMergeKey(k) {
			merges = append(merges, i)
			// go-yaml v2 merge: an alias must name a mapping; a list of
			// mappings is written in place.
			if v.Kind == yaml.AliasNode && v.Alias != nil && v.Alias.Kind != yaml.MappingNode {
				return fmt.Errorf("line %d: a merge key takes a mapping or a list of mappings, got an alias of a %s", k.Line, kindName(v.Alias))
			}
		} else if k.Kind == yaml.AliasNode {
			r, err := w.resolved(k, depth)
			if err != nil {
				return err
			}
			if isMergeKey(r) {
				// A key named "<<" (kubectl's too), written back quoted
				// (pin): written plain it would be a merge key.
				r.Tag, r.Style = "!!str", yaml.DoubleQuotedStyle
			}
			n.Content[i] = r
		}
		if w.yaml11 && !isMergeKey(n.Content[i]) {
			if err := key11(n.Content[i]); err != nil {
				return err
			}
		}
		v, err := w.resolved(v, depth)
		if err != nil {
			return err
		}
		n.Content[i+1] = v
	}
	if merges == nil {
		return checkDuplicates(n.Content)
	}
	return applyMerges(n, merges)
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!!merge" || k.Tag == "tag:yaml.org,2002:merge")
}

// applyMerges rewrites a mapping holding merge keys (at merges) to the
// mapping kubectl decodes, as go-yaml v2 does (decode.go mapping and
// merge, which sigs.k8s.io/yaml calls): the pairs are set in the order they
// are written, each overwriting a key set before it; a merge key sets the
// pairs of its mapping where it stands, so it overwrites the keys written
// before it and the keys written after it overwrite it; of a list of
// mappings the last is set first, so the first wins. (The YAML 1.1 merge
// draft, and kustomize's reader, let explicit keys win: kubectl does not.)
// A key written twice, not by a merge, is still an error. A key keeps the
// place where it was first set and takes the node of the pair that set it
// last.
func applyMerges(n *yaml.Node, merges []int) error {
	out := make([]*yaml.Node, 0, len(n.Content))
	at := make(map[string]int, len(n.Content)/2)             // key → index in out
	written := make(map[string]*yaml.Node, len(n.Content)/2) // keys not set by a merge
	set := func(k, v *yaml.Node) {
		key := keyOf(k)
		if i, ok := at[key]; ok {
			out[i], out[i+1] = k, v
			return
		}
		at[key] = len(out)
		out = append(out, k, v)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if len(merges) > 0 && merges[0] == i {
			merges = merges[1:]
			sources, err := mergeSources(v, k.Line)
			if err != nil {
				return err
			}
			for _, pairs := range sources {
				for j := 0; j+1 < len(pairs); j += 2 {
					set(pairs[j], pairs[j+1])
				}
			}
			continue
		}
		key := keyOf(k)
		if first, ok := written[key]; ok {
			return duplicate(first, k)
		}
		written[key] = k
		set(k, v)
	}
	n.Content = out
	return nil
}

// mergeSources returns the key/value lists a merge key's value sets, in
// the order they are set: a mapping, or a list of mappings from its last
// to its first (already normalized: their own merge keys applied).
func mergeSources(v *yaml.Node, line int) ([][]*yaml.Node, error) {
	switch v.Kind {
	case yaml.MappingNode:
		return [][]*yaml.Node{v.Content}, nil
	case yaml.SequenceNode:
		out := make([][]*yaml.Node, 0, len(v.Content))
		for i := len(v.Content) - 1; i >= 0; i-- {
			m := v.Content[i]
			if m.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: a merge key takes mappings, got a %s", line, kindName(m))
			}
			out = append(out, m.Content)
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: a merge key takes a mapping or a list of mappings, got a %s", line, kindName(v))
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
