package stream

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The fast reader: most rendered manifests are written in a small part of
// YAML (block mappings and sequences, one-line flow collections, plain and
// one-line quoted scalars, no comments, anchors, tags or block scalars),
// and the general YAML reader spends most of a check's parse on
// machinery that part does not need (a token queue, events, simple-key
// bookkeeping). fastDocuments reads a chunk whose every document is in
// that part, giving the very nodes the general reader gives (kind, style,
// tag, value, line and column; FuzzFastDocuments holds it to that), and
// declines anything else, at the first byte outside it: the caller then
// reads the whole chunk with the general reader, so what it does not
// know is never read differently, only more slowly.

// fastKeyMax bounds a key's length: YAML allows an implicit key of at most
// 1024 characters, and the general reader refuses a longer one.
const fastKeyMax = 1000

type fastReader struct {
	src  []byte // the chunk
	text string // the current document's bytes as a string: values are cut from it
	base int    // offset of text in src
	pos  int    // offset in src of the current line's start
	line int    // its line, from 1
	// the current line, once looked at (look): its indentation and end
	// (before the line break), and where its content starts (after the
	// indentation, or after a sequence entry's "- " on the same line)
	ind, start, end int
	looked          bool
	stack           []*yaml.Node // the entries of the collections being read
}

// fastDocuments reads c's documents with the fast reader; ok is false if
// any of them is outside the part it reads.
func fastDocuments(c []byte) (docs []*yaml.RNode, ok bool) {
	if !fastBytes(c) {
		return nil, false
	}
	r := &fastReader{src: c, line: 1}
	for r.pos < len(c) {
		n, ok := r.document()
		if !ok {
			return nil, false
		}
		if n != nil {
			docs = append(docs, yaml.NewRNode(n))
		}
	}
	return docs, true
}

// fastBytes reports whether c holds only bytes the fast reader reads:
// printable ASCII and line feeds. A tab, a carriage return, a comment
// sign anywhere (even inside a scalar), an escape or any other byte sends
// the chunk to the general reader.
func fastBytes(c []byte) bool {
	for _, b := range c {
		if b < ' ' && b != '\n' || b >= 0x7f || b == '#' || b == '\\' {
			return false
		}
	}
	return true
}

// document reads one document, up to the next "---" line or the end: nil
// for an empty one (as the caller skips it), ok false if the fast reader
// declines it.
func (r *fastReader) document() (n *yaml.Node, ok bool) {
	// a separator line first, "---" alone
	if e := lineEnd(r.src, r.pos); isSeparator(r.src[r.pos:e]) {
		if string(r.src[r.pos:e]) != "---" {
			return nil, false // content after the separator
		}
		r.next()
	}
	docStart := r.pos
	docEnd := len(r.src)
	for i := r.pos; i < len(r.src); {
		e := lineEnd(r.src, i)
		if isSeparator(r.src[i:e]) {
			docEnd = i
			break
		}
		if e < len(r.src) {
			e++
		}
		i = e
	}
	r.text = string(r.src[docStart:docEnd])
	r.base = docStart
	if !r.skipBlank(docEnd) {
		r.pos, r.looked = docEnd, false
		return nil, true // nothing but blank lines
	}
	r.look()
	if r.ind != 0 {
		return nil, false
	}
	m, ok := r.blockMapping(0, docEnd)
	if !ok {
		return nil, false
	}
	if r.skipBlank(docEnd) {
		return nil, false // something at the top level after the mapping
	}
	r.pos, r.looked = docEnd, false
	return m, true
}

// lineEnd is the offset of the line break ending the line at i, or len(c).
func lineEnd(c []byte, i int) int {
	for ; i < len(c); i++ {
		if c[i] == '\n' {
			return i
		}
	}
	return i
}

// look measures the current line, once.
func (r *fastReader) look() {
	if r.looked {
		return
	}
	r.end = lineEnd(r.src, r.pos)
	i := r.pos
	for i < r.end && r.src[i] == ' ' {
		i++
	}
	r.ind = i - r.pos
	r.start = i
	r.looked = true
}

// next moves to the line after the current one.
func (r *fastReader) next() {
	r.look()
	r.pos = r.end
	if r.pos < len(r.src) {
		r.pos++
	}
	r.line++
	r.looked = false
}

// skipBlank moves past blank lines; false at limit.
func (r *fastReader) skipBlank(limit int) bool {
	for r.pos < limit {
		r.look()
		if r.start < r.end {
			return true
		}
		r.next()
	}
	return false
}

// node gives a fresh node. (Allocating a document's nodes together was
// tried twice, in blocks of an estimate and in one block of their number:
// the check keeps a few nodes of most objects past their check, a block
// kept all of its document's, and the bench render's peak went from
// 230 MiB to 339 and 316 MiB, for no CPU saved.)
func (r *fastReader) node(kind yaml.Kind, tag string, line, col int) *yaml.Node {
	n := new(yaml.Node)
	n.Kind, n.Tag, n.Line, n.Column = kind, tag, line, col
	return n
}

// collect moves the entries pushed since mark into n's content.
func (r *fastReader) collect(n *yaml.Node, mark int) {
	n.Content = append([]*yaml.Node(nil), r.stack[mark:]...)
	clear(r.stack[mark:])
	r.stack = r.stack[:mark]
}

// col is the column (from 1) of offset i on the current line.
func (r *fastReader) col(i int) int { return i - r.pos + 1 }

// str is the document's text between two offsets of the chunk.
func (r *fastReader) str(a, b int) string { return r.text[a-r.base : b-r.base] }

// blockMapping reads the mapping whose keys start at column ind+1, the
// first on the current line at r.start.
func (r *fastReader) blockMapping(ind, limit int) (*yaml.Node, bool) {
	m := r.node(yaml.MappingNode, "!!map", r.line, r.col(r.start))
	mark := len(r.stack)
	for {
		// a key, then ':'
		k, i, ok := r.key()
		if !ok {
			return nil, false
		}
		r.stack = append(r.stack, k)
		for i < r.end && r.src[i] == ' ' {
			i++
		}
		var v *yaml.Node
		if i < r.end {
			// a value on the key's line
			if v, ok = r.inlineValue(i); !ok {
				return nil, false
			}
			r.next()
		} else {
			// a collection on the lines below
			r.next()
			if !r.skipBlank(limit) {
				return nil, false // an empty value: null
			}
			r.look()
			switch {
			case r.ind > ind && r.dash():
				v, ok = r.blockSequence(r.ind, limit)
			case r.ind > ind:
				v, ok = r.blockMapping(r.ind, limit)
			case r.ind == ind && r.dash():
				v, ok = r.blockSequence(ind, limit) // a sequence at its key's indentation
			default:
				return nil, false // an empty value: null
			}
			if !ok {
				return nil, false
			}
		}
		r.stack = append(r.stack, v)
		if !r.skipBlank(limit) {
			break
		}
		r.look()
		if r.ind < ind {
			break
		}
		if r.ind > ind || r.dash() {
			return nil, false // a continued scalar, or something misplaced
		}
	}
	r.collect(m, mark)
	return m, true
}

// dash reports whether the current line's content is a sequence entry.
func (r *fastReader) dash() bool {
	return r.start < r.end && r.src[r.start] == '-' && (r.start+1 == r.end || r.src[r.start+1] == ' ')
}

// blockSequence reads the sequence whose "- " entries are at column
// ind+1, the first on the current line.
func (r *fastReader) blockSequence(ind, limit int) (*yaml.Node, bool) {
	s := r.node(yaml.SequenceNode, "!!seq", r.line, r.col(r.start))
	mark := len(r.stack)
	for {
		i := r.start + 1
		for i < r.end && r.src[i] == ' ' {
			i++
		}
		if i == r.end {
			return nil, false // an entry below its dash, or an empty one
		}
		var v *yaml.Node
		if r.isKey(i) {
			// a mapping starting on the dash's line: its keys are at the
			// column of the first
			r.start = i
			var ok bool
			if v, ok = r.blockMapping(i-r.pos, limit); !ok {
				return nil, false
			}
		} else {
			var ok bool
			if v, ok = r.inlineValue(i); !ok {
				return nil, false
			}
			r.next()
			if r.skipBlank(limit) {
				if r.look(); r.ind > ind {
					return nil, false // a continued scalar, or something misplaced
				}
			}
		}
		r.stack = append(r.stack, v)
		if !r.skipBlank(limit) {
			break
		}
		r.look()
		if r.ind != ind || !r.dash() {
			break
		}
	}
	r.collect(s, mark)
	return s, true
}

// isKey reports whether the content at i on the current line starts with
// a key: a plain or quoted scalar followed by ": " or by ':' at the end.
func (r *fastReader) isKey(i int) bool {
	switch r.src[i] {
	case '"', '\'':
		_, j, ok := r.quoted(i, r.end)
		return ok && j < r.end && r.src[j] == ':'
	case '{', '[':
		return false
	}
	for j := i; j < r.end; j++ {
		if r.src[j] == ':' && (j+1 == r.end || r.src[j+1] == ' ') {
			return true
		}
	}
	return false
}

// key reads the key at r.start, and gives the offset after its ':'.
func (r *fastReader) key() (*yaml.Node, int, bool) {
	i := r.start
	if c := r.src[i]; c == '"' || c == '\'' {
		k, j, ok := r.quoted(i, r.end)
		if !ok || j == r.end || r.src[j] != ':' || j+1 < r.end && r.src[j+1] != ' ' || j-i > fastKeyMax {
			return nil, 0, false
		}
		return k, j + 1, true
	}
	j := i
	for j < r.end && !(r.src[j] == ':' && (j+1 == r.end || r.src[j+1] == ' ')) {
		j++
	}
	if j == r.end || j-i > fastKeyMax {
		return nil, 0, false
	}
	e := j
	for e > i && r.src[e-1] == ' ' {
		e--
	}
	if e < j {
		return nil, 0, false // "key :": spaces before the indicator
	}
	k, ok := r.plain(i, e, false)
	if !ok {
		return nil, 0, false
	}
	return k, j + 1, true
}

// inlineValue reads the value at i, which ends the current line.
func (r *fastReader) inlineValue(i int) (*yaml.Node, bool) {
	e := r.end
	for e > i && r.src[e-1] == ' ' {
		e--
	}
	switch r.src[i] {
	case '{', '[':
		v, j, ok := r.flow(i, e, 0)
		if !ok || j != e {
			return nil, false
		}
		return v, true
	case '"', '\'':
		v, j, ok := r.quoted(i, e)
		if !ok || j != e {
			return nil, false
		}
		return v, true
	}
	for j := i; j < e; j++ {
		if r.src[j] == ':' && (j+1 == e || r.src[j+1] == ' ') {
			return nil, false // a mapping where a scalar may be
		}
	}
	return r.plain(i, e, false)
}

// flowDepth bounds the nesting of flow collections the fast reader reads.
const flowDepth = 16

// flow reads the flow collection at i (its '{' or '['), which ends before
// limit on the current line, and gives the offset after it.
func (r *fastReader) flow(i, limit, depth int) (*yaml.Node, int, bool) {
	if depth > flowDepth {
		return nil, 0, false
	}
	open := r.src[i]
	closing := byte('}')
	kind, tag := yaml.MappingNode, "!!map"
	if open == '[' {
		closing, kind, tag = ']', yaml.SequenceNode, "!!seq"
	}
	n := r.node(kind, tag, r.line, r.col(i))
	n.Style = yaml.FlowStyle
	mark := len(r.stack)
	j := skipSpaces(r.src, i+1, limit)
	if j < limit && r.src[j] == closing {
		r.collect(n, mark)
		return n, j + 1, true
	}
	for {
		if open == '{' {
			k, e, ok := r.flowItem(j, limit, depth)
			if !ok || k.Kind != yaml.ScalarNode || e-j > fastKeyMax || e >= limit || r.src[e] != ':' ||
				e+1 >= limit || r.src[e+1] != ' ' {
				return nil, 0, false
			}
			r.stack = append(r.stack, k)
			j = skipSpaces(r.src, e+1, limit)
		}
		v, e, ok := r.flowItem(j, limit, depth)
		if !ok {
			return nil, 0, false
		}
		r.stack = append(r.stack, v)
		j = skipSpaces(r.src, e, limit)
		if j >= limit {
			return nil, 0, false
		}
		if r.src[j] == closing {
			r.collect(n, mark)
			return n, j + 1, true
		}
		if r.src[j] != ',' {
			return nil, 0, false
		}
		j = skipSpaces(r.src, j+1, limit)
		if j >= limit || r.src[j] == closing {
			return nil, 0, false // a trailing comma
		}
	}
}

// flowItem reads a key or value inside a flow collection.
func (r *fastReader) flowItem(j, limit, depth int) (*yaml.Node, int, bool) {
	if j >= limit {
		return nil, 0, false
	}
	switch r.src[j] {
	case '{', '[':
		return r.flow(j, limit, depth+1)
	case '"', '\'':
		return r.quoted(j, limit)
	}
	e := j
	for e < limit {
		c := r.src[e]
		if c == ',' || c == ']' || c == '}' || c == '{' || c == '[' || c == ':' {
			break
		}
		e++
	}
	if e < limit && (r.src[e] == '{' || r.src[e] == '[') {
		return nil, 0, false
	}
	next := e
	for e > j && r.src[e-1] == ' ' {
		e--
	}
	if e == j {
		return nil, 0, false
	}
	if next < limit && r.src[next] == ':' && e < next {
		return nil, 0, false // "key :" in a flow mapping
	}
	n, ok := r.plain(j, e, true)
	return n, next, ok
}

func skipSpaces(c []byte, i, limit int) int {
	for i < limit && c[i] == ' ' {
		i++
	}
	return i
}

// quoted reads the one-line quoted scalar at i, ending before limit, and
// gives the offset after its closing quote.
func (r *fastReader) quoted(i, limit int) (*yaml.Node, int, bool) {
	q := r.src[i]
	style := yaml.DoubleQuotedStyle
	if q == '\'' {
		style = yaml.SingleQuotedStyle
	}
	doubled := false
	j := i + 1
	for {
		if j >= limit {
			return nil, 0, false // not closed on this line
		}
		if r.src[j] == q {
			if q == '\'' && j+1 < limit && r.src[j+1] == '\'' {
				doubled = true
				j += 2
				continue
			}
			break
		}
		j++
	}
	n := r.node(yaml.ScalarNode, "!!str", r.line, r.col(i))
	n.Style = style
	if doubled {
		b := make([]byte, 0, j-i-1)
		for k := i + 1; k < j; k++ {
			b = append(b, r.src[k])
			if r.src[k] == '\'' {
				k++
			}
		}
		n.Value = string(b)
	} else {
		n.Value = r.str(i+1, j)
	}
	return n, j + 1, true
}

// plain reads the plain scalar between i and e, if the fast reader knows
// how the general one would resolve its tag.
func (r *fastReader) plain(i, e int, inFlow bool) (*yaml.Node, bool) {
	if i >= e {
		return nil, false
	}
	switch r.src[i] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '<', '.', '~', ' ':
		if r.src[i] != '-' || i+1 == e || r.src[i+1] == ' ' {
			return nil, false
		}
	}
	for k := i; k < e; k++ {
		switch r.src[k] {
		case ':':
			if inFlow || k+1 == e || r.src[k+1] == ' ' {
				return nil, false
			}
		case ',', '[', ']', '{', '}', '?': // the YAML reader ends a flow scalar at '?' too
			if inFlow {
				return nil, false
			}
		}
	}
	tag, ok := plainTag(r.src[i:e])
	if !ok {
		return nil, false
	}
	n := r.node(yaml.ScalarNode, tag, r.line, r.col(i))
	n.Value = r.str(i, e)
	return n, true
}

// plainTag is the tag the general reader resolves a plain scalar to, as
// far as the fast reader can tell without its number and time parsers:
// ok is false for anything that may be a number or time other than a
// plain decimal integer.
func plainTag(v []byte) (string, bool) {
	switch string(v) {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool", true
	case "null", "Null", "NULL":
		return "!!null", true
	}
	c := v[0]
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '=' || c == '$' || c == '(' || c == ')' || c == '^' || c == '_' || c == ';' {
		return "!!str", true
	}
	if c >= '0' && c <= '9' || c == '-' || c == '+' {
		if decimal(v) {
			return "!!int", true
		}
		for _, b := range v {
			if !numberByte[b] {
				return "!!str", true // no number or time holds this byte
			}
		}
	}
	return "", false
}

// decimal: "0", or up to 18 digits not starting with 0 (no sign).
func decimal(v []byte) bool {
	if len(v) > 18 || v[0] == '0' && len(v) > 1 {
		return false
	}
	for _, b := range v {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

// numberByte holds the bytes an integer (any base, with '_'), a float
// (exponents, ".inf", ".nan") or a timestamp can be written with.
var numberByte = func() (t [256]bool) {
	// ',' too: time.Parse takes it before a fraction of a second
	for _, b := range []byte("0123456789abcdefABCDEFxXoObB_.+-eEiInNtTzZ:, ") {
		t[b] = true
	}
	return t
}()
