package manifest

import (
	"hash/maphash"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Release drops what an object holds beyond what names it, in place:
// apiVersion, kind, and of its metadata the name, namespace, generateName
// and annotations (the reader's file and index among them). The node stays the
// object (every pointer to it stays valid); the rest is left to the
// collector. The streamed check releases an object once the rules that
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
			kept = append(kept, k, v)
		case "metadata":
			kept = append(kept, k, releaseMetadata(v))
		}
	}
	n.Content = kept
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
		case "name", "namespace", "generateName", "annotations":
			out.Content = append(out.Content, k, v)
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
