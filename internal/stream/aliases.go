package stream

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// CheckAliases reports the aliases of a YAML stream that kustomize's reader
// cannot expand, before kustomize reads it: an alias inside the node its
// anchor names (a cycle: kyaml's DeAnchor follows it until the stack
// overflows, the run dying after seconds with a runtime trace) and aliases
// that add more than maxExpanded nodes to one document as they expand (a
// "billion laughs": kyaml expands them all). Data that is not YAML is not
// its to judge (a generator's .env or .properties file; kustomize says
// what is wrong with a resource that does not parse): nil. So are nodes
// as written, however many: only what aliases add counts.
func CheckAliases(data []byte) error {
	if !mayHold(data, '*') || !mayHold(data, '&') {
		return nil // no alias, or no anchor for one to name
	}
	d := yaml.NewDecoder(bytes.NewReader(data))
	// Sizes are kept across documents: the decoder lets a document's alias
	// name an earlier document's anchor (kyaml's reader then refuses it),
	// and each shared subtree is counted once however often it is named.
	a := &aliasSizes{size: map[*yaml.Node]int{}, open: map[*yaml.Node]bool{}}
	for doc := 1; ; doc++ {
		var n yaml.Node
		if err := d.Decode(&n); err != nil {
			return nil // the end, or not YAML: kustomize's to report
		}
		written, aliases := countWritten(&n, 0)
		if aliases == 0 {
			continue
		}
		a.limit = written + maxExpanded
		size, err := a.of(&n, 0)
		if err != nil && unicodeBreaks(data) {
			// The reader's lines count NEL, LS and PS as breaks; the
			// error names the file's.
			fileLines([]*yaml.RNode{yaml.NewRNode(&n)}, data)
			a.size = map[*yaml.Node]int{}
			_, err = a.of(&n, 0)
		}
		if err != nil {
			return fmt.Errorf("document %d (counting from 1): %w", doc, err)
		}
		if size > a.limit {
			return fmt.Errorf("document %d (counting from 1): excessive aliasing: its aliases add more than %d nodes", doc, maxExpanded)
		}
	}
}

// mayHold reports whether data may hold an alias (c '*') or an anchor
// (c '&') as go-yaml's scanner reads it: the indicator where a token can
// start, followed by a name. A token starts at the start of the data,
// after a blank or a line break (yamlprivateh.go is_blank and is_break: a
// space, a tab, "\n", "\r", and NEL, LINE SEPARATOR and PARAGRAPH
// SEPARATOR, which a LINE SEPARATOR before *a made invisible here), a byte
// order mark, or an indicator that needs no blank after it: "[", "{", ",",
// "]", "}", a ":" or a "?" in a flow collection ({"a":*x}, {?*x : y}).
// Data in UTF-16 (a byte order mark first), which the scanner reads too,
// is always parsed. Inside a quoted string "a *b" counts too: it only
// decides whether to parse.
func mayHold(data []byte, c byte) bool {
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return true
	}
	for i := bytes.IndexByte(data, c); i >= 0; {
		if i+1 < len(data) && tokenMayStart(data, i) &&
			bytes.IndexByte([]byte(" \t\n\r,[]{}"), data[i+1]) < 0 {
			return true
		}
		j := bytes.IndexByte(data[i+1:], c)
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// bom is UTF-8's byte order mark.
var bom = []byte("\ufeff")

// tokenMayStart reports whether go-yaml's scanner may start a token at
// data[i] (see mayHold).
func tokenMayStart(data []byte, i int) bool {
	if i == 0 {
		return true
	}
	switch data[i-1] {
	case ' ', '\t', '\n', '\r', '[', '{', ',', ']', '}', ':', '?':
		return true
	case 0x85, 0xa8, 0xa9, 0xbf: // the last byte of NEL, LS, PS or a BOM
		before := data[:i]
		return bytes.HasSuffix(before, nel) || bytes.HasSuffix(before, ls) || bytes.HasSuffix(before, ps) || bytes.HasSuffix(before, bom)
	}
	return false
}

// countWritten counts the nodes of a tree as written (an alias is one) and
// its aliases, within maxDepth (deeper, the count stops: the walk that
// expands says why).
func countWritten(n *yaml.Node, depth int) (nodes, aliases int) {
	if depth > maxDepth {
		return 1, 1
	}
	nodes = 1
	if n.Kind == yaml.AliasNode {
		return 1, 1
	}
	for _, c := range n.Content {
		cn, ca := countWritten(c, depth+1)
		nodes += cn
		aliases += ca
	}
	return nodes, aliases
}

// aliasSizes counts the nodes of a tree with its aliases expanded, each
// node once (a size is kept), and finds an alias inside its own anchor.
type aliasSizes struct {
	size  map[*yaml.Node]int
	open  map[*yaml.Node]bool // nodes being counted: an alias to one is a cycle
	limit int                 // past it, counting stops: the size is only "more"
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
		if err == nil && s <= a.limit {
			a.size[n] = s
		}
		return s, err
	}
	a.open[n] = true
	defer delete(a.open, n)
	total := 1
	for _, c := range n.Content {
		s, err := a.of(c, depth+1)
		if err != nil {
			return 0, err
		}
		if total += s; total > a.limit {
			return total, nil // past the bound: not kept, the caller says so
		}
	}
	a.size[n] = total
	return total, nil
}
