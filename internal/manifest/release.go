package manifest

import (
	"encoding/binary"
	"hash/maphash"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Release drops what an object holds beyond what names it, in place:
// apiVersion, kind, and of its metadata the name, namespace, generateName
// and annotations (the reader's file and index among them). The node stays the
// object (every pointer to it stays valid); the rest is left to the
// collector, and the plain keys of what is kept are nodes shared by every
// released object (their lines are not kept). The streamed check releases an object once the rules that
// judge objects one by one have, unless a rule that reads the whole render
// reads its kind (rules.Rule.Reads).
func Release(r *yaml.RNode) {
	n := r.YNode()
	if n.Kind != yaml.MappingNode {
		return
	}
	kept := make([]*yaml.Node, 0, 6)
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k, v := n.Content[i], n.Content[i+1]; k.Value {
		case "apiVersion", "kind":
			kept = append(kept, sharedKey(k), v)
		case "metadata":
			kept = append(kept, sharedKey(k), releaseMetadata(v))
		}
	}
	n.Content = kept
}

// sharedKeys are the keys every released object holds, one node each for
// all of them: a key node is a tenth of a released object, and no rule
// reads where a released object's keys were (the rules that place
// findings at lines judged it before it was released).
var sharedKeys = func() map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	for _, k := range []string{"apiVersion", "kind", "metadata", "name", "namespace", "generateName", "annotations", kioutil.PathAnnotation, kioutil.IndexAnnotation} {
		m[k] = &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: k}
	}
	return m
}()

// sharedKey is the shared node for a plain key, else k itself.
func sharedKey(k *yaml.Node) *yaml.Node {
	s := sharedKeys[k.Value]
	if s == nil || k.Kind != yaml.ScalarNode || k.Style != 0 || k.Tag != yaml.NodeTagString || k.Anchor != "" ||
		k.HeadComment != "" || k.LineComment != "" || k.FootComment != "" || len(k.Content) > 0 {
		return k
	}
	return s
}

// releaseMetadata is what Release keeps of metadata.
func releaseMetadata(md *yaml.Node) *yaml.Node {
	if md.Kind != yaml.MappingNode {
		return md
	}
	out := *md
	out.Content = make([]*yaml.Node, 0, 8)
	for i := 0; i+1 < len(md.Content); i += 2 {
		switch k, v := md.Content[i], md.Content[i+1]; k.Value {
		case "name", "namespace", "generateName":
			out.Content = append(out.Content, sharedKey(k), v)
		case "annotations":
			if v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					v.Content[j] = sharedKey(v.Content[j])
				}
			}
			out.Content = append(out.Content, sharedKey(k), v)
		}
	}
	return &out
}

// ContentKey is a digest of an object as the cluster would receive it from
// this render, the annotations readers and renderers add left out (any key
// holding "config.kubernetes.io/", any internal.kubectl-gate.dev/ one): two
// objects with equal keys print the same, so a released object can still
// be told an identical copy of another (render-duplicate). The key is of
// the tree as the printer reads it, so trees that print the same have
// equal keys in all but odd cases (a value that needs quotes, written
// plain in one and quoted in the other): those, rules/render.Comparable
// finds.
// Keys are compared only between copies of one object, so 64 bits make a
// false "identical" a chance of one in 2^64 per pair.
type ContentKey uint64

// contentSeed is the process's hash seed: keys compare within a run.
var contentSeed = maphash.MakeSeed()

// ContentKeyOf returns r's ContentKey.
func ContentKeyOf(r *yaml.RNode) ContentKey {
	var h maphash.Hash
	h.SetSeed(contentSeed)
	hashNode(&h, r.YNode(), 0)
	return ContentKey(h.Sum64())
}

// hashNode writes n and what it holds; depth 0 is the object, 1 its
// top-level values, 2 metadata's: metadata.annotations drops the added
// annotations.
func hashNode(h *maphash.Hash, n *yaml.Node, depth int) {
	var head [2]byte
	head[0], head[1] = byte(n.Kind), byte(n.Style)
	_, _ = h.Write(head[:])
	// What the printer prints: the tag as it resolves (a key a transformer
	// added untagged prints as a parsed one), an alias by its name, no
	// children of a scalar.
	for _, s := range [...]string{n.ShortTag(), n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment} {
		_, _ = h.WriteString(s)
		_ = h.WriteByte(0)
	}
	if n.Kind == yaml.ScalarNode || n.Kind == yaml.AliasNode {
		return
	}
	_ = h.WriteByte(byte(len(n.Content)))
	for i := 0; i < len(n.Content); i++ {
		c := n.Content[i]
		if n.Kind == yaml.MappingNode && i+1 < len(n.Content) {
			if depth == 2 && addedAnnotation(c.Value) {
				i++
				continue
			}
			next := -1
			switch {
			case depth == 0 && c.Value == "metadata":
				next = 1
			case depth == 1 && c.Value == "annotations":
				next = 2
			}
			hashNode(h, c, -1)
			hashNode(h, n.Content[i+1], next)
			i++
			continue
		}
		hashNode(h, c, -1)
	}
	_ = h.WriteByte(2)
}

// addedAnnotation reports the annotations readers and renderers add,
// which an object's content leaves out.
func addedAnnotation(key string) bool {
	return strings.Contains(key, "config.kubernetes.io/") || strings.HasPrefix(key, "internal.kubectl-gate.dev/")
}

// Packed is an object's tree in a few bytes a node instead of a node's
// hundred and fifty: every field of every node, lines and comments
// included, so that Unpack gives back an equal tree. The streamed check
// packs the objects a rule reads only where another object names them
// (rules.Rule.Follows) before it releases them.
type Packed []byte

// Pack packs r; ok is false for a tree Pack cannot give back equal (an
// alias, which points into the tree).
func Pack(r *yaml.RNode) (p Packed, ok bool) {
	var b []byte
	if !pack(&b, r.YNode()) {
		return nil, false
	}
	return Packed(b), true
}

func pack(b *[]byte, n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Alias != nil {
		return false
	}
	*b = append(*b, byte(n.Kind), byte(n.Style), tagCode(n.Tag))
	if tagCode(n.Tag) == 0 {
		*b = binary.AppendUvarint(*b, uint64(len(n.Tag)))
		*b = append(*b, n.Tag...)
	}
	for _, s := range [...]string{n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment} {
		*b = binary.AppendUvarint(*b, uint64(len(s)))
		*b = append(*b, s...)
	}
	*b = binary.AppendUvarint(*b, uint64(n.Line))
	*b = binary.AppendUvarint(*b, uint64(n.Column))
	children := uint64(0) // nil; else 1 + how many (a {} holds none, not nil)
	if n.Content != nil {
		children = 1 + uint64(len(n.Content))
	}
	*b = binary.AppendUvarint(*b, children)
	for _, c := range n.Content {
		if !pack(b, c) {
			return false
		}
	}
	return true
}

// Unpack gives back the tree Pack packed, as a new object.
func Unpack(p Packed) *yaml.RNode {
	n, _ := unpack(p)
	return yaml.NewRNode(n)
}

func unpack(p []byte) (*yaml.Node, []byte) {
	n := &yaml.Node{Kind: yaml.Kind(p[0]), Style: yaml.Style(p[1])}
	code := p[2]
	p = p[3:]
	str := func() string {
		l, w := binary.Uvarint(p)
		s := string(p[w : w+int(l)])
		p = p[w+int(l):]
		return s
	}
	if code == 0 {
		n.Tag = str()
	} else {
		n.Tag = packedTags[code]
	}
	n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment = str(), str(), str(), str(), str()
	line, w := binary.Uvarint(p)
	p = p[w:]
	col, w := binary.Uvarint(p)
	p = p[w:]
	count, w := binary.Uvarint(p)
	p = p[w:]
	n.Line, n.Column = int(line), int(col)
	if count > 0 {
		n.Content = make([]*yaml.Node, count-1)
		for i := range n.Content {
			n.Content[i], p = unpack(p)
		}
	}
	return n, p
}

// packedTags are the tags a parsed tree is made of, packed as one byte
// (0: written out).
var packedTags = [...]string{1: "", 2: yaml.NodeTagString, 3: yaml.NodeTagMap, 4: yaml.NodeTagSeq, 5: yaml.NodeTagInt, 6: yaml.NodeTagBool, 7: yaml.NodeTagNull, 8: yaml.NodeTagFloat}

func tagCode(tag string) byte {
	for i := 1; i < len(packedTags); i++ {
		if packedTags[i] == tag {
			return byte(i)
		}
	}
	return 0
}
