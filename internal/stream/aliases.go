package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// CheckAliases reports the aliases of a YAML stream that kustomize's reader
// cannot expand, before kustomize reads it: an alias inside the node its
// anchor names (a cycle: kyaml's DeAnchor follows it until the stack
// overflows, the run dying after seconds with a runtime trace) and aliases
// that expand past maxExpanded nodes in one document (a "billion laughs":
// kyaml expands them all). Data that is not YAML is not its to judge (a
// generator's .env or .properties file; kustomize says what is wrong with
// a resource that does not parse): nil.
func CheckAliases(data []byte) error {
	if !bytes.Contains(data, []byte("*")) || !bytes.Contains(data, []byte("&")) {
		return nil // no alias, or none names an anchor
	}
	d := yaml.NewDecoder(bytes.NewReader(data))
	for doc := 1; ; doc++ {
		var n yaml.Node
		if err := d.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return nil // not YAML: kustomize's to report
		}
		a := &aliasSizes{size: map[*yaml.Node]int{}, open: map[*yaml.Node]bool{}}
		if size, err := a.of(&n, 0); err != nil {
			return fmt.Errorf("document %d (counting from 1): %w", doc, err)
		} else if size > maxExpanded {
			return fmt.Errorf("document %d (counting from 1): excessive aliasing: its aliases expand to more than %d nodes", doc, maxExpanded)
		}
	}
}

// aliasSizes counts the nodes of a tree with its aliases expanded, each
// node once (a size is kept), and finds an alias inside its own anchor.
type aliasSizes struct {
	size map[*yaml.Node]int
	open map[*yaml.Node]bool // nodes being counted: an alias to one is a cycle
}

func (a *aliasSizes) of(n *yaml.Node, depth int) (int, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("line %d: nested deeper than %d levels", n.Line, maxDepth)
	}
	if s, ok := a.size[n]; ok {
		return s, nil
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		if a.open[n.Alias] {
			return 0, fmt.Errorf("line %d: alias *%s is inside the node its anchor &%s names (line %d): a cycle no reader can expand", n.Line, n.Value, n.Alias.Anchor, n.Alias.Line)
		}
		s, err := a.of(n.Alias, depth+1)
		a.size[n] = s
		return s, err
	}
	a.open[n] = true
	total := 1
	for _, c := range n.Content {
		s, err := a.of(c, depth+1)
		if err != nil {
			return 0, err
		}
		if total += s; total > maxExpanded {
			break // past the bound: the caller says so
		}
	}
	delete(a.open, n)
	a.size[n] = total
	return total, nil
}
