package diff

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// Change kinds.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Key names an object: API group (without version), kind, namespace, name.
type Key struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func (k Key) String() string {
	s := k.Kind
	if k.Group != "" {
		s = k.Group + "/" + k.Kind
	}
	if k.Namespace != "" {
		return s + " " + k.Namespace + "/" + k.Name
	}
	return s + " " + k.Name
}

func keyOf(n *yaml.RNode) Key {
	group, _, ok := strings.Cut(n.GetApiVersion(), "/")
	if !ok {
		group = ""
	}
	return Key{Group: group, Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
}

// ObjectChange is one object added, removed or changed.
type ObjectChange struct {
	Key    Key           `json:"object"`
	Change string        `json:"change"`
	Fields []FieldChange `json:"fields,omitempty"`
}

// FieldChange is one field of an object that differs. For a Secret's data
// and stringData, Base and Head are never set: Note says "changed (8 → 12
// bytes)".
type FieldChange struct {
	Path string `json:"path"`
	Base string `json:"base,omitempty"`
	Head string `json:"head,omitempty"`
	Note string `json:"note,omitempty"`
}

// maxFields bounds the field changes listed per object.
const maxFields = 200

// Objects compares two renders. The gate's own annotations (origin,
// reader) are left out; for an added or removed object only its Secret
// keys are listed.
func Objects(base, head []*yaml.RNode) []ObjectChange {
	b, h := index(base), index(head)
	var out []ObjectChange
	for k, hn := range h {
		bn, ok := b[k]
		switch {
		case !ok:
			out = append(out, ObjectChange{Key: k, Change: Added, Fields: secretKeys(k, hn, "added")})
		default:
			var fs []FieldChange
			if isSecret(k) {
				fs = secretFields(bn, hn)
			} else {
				walk("", bn.YNode(), hn.YNode(), &fs)
			}
			if len(fs) > 0 {
				if len(fs) > maxFields {
					fs = append(fs[:maxFields], FieldChange{Path: "…", Note: fmt.Sprintf("and %d more field(s)", len(fs)-maxFields)})
				}
				out = append(out, ObjectChange{Key: k, Change: Changed, Fields: fs})
			}
		}
	}
	for k, bn := range b {
		if _, ok := h[k]; !ok {
			out = append(out, ObjectChange{Key: k, Change: Removed, Fields: secretKeys(k, bn, "removed")})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.String() < out[j].Key.String() })
	return out
}

// index keys a render's objects, on copies without the gate's annotations.
func index(nodes []*yaml.RNode) map[Key]*yaml.RNode {
	out := make(map[Key]*yaml.RNode, len(nodes))
	for _, n := range nodes {
		c := n.Copy()
		render.StripBuildAnnotations([]*yaml.RNode{c})
		for _, a := range render.ReaderAnnotations {
			yamlpath.DeleteAnnotation(c.YNode(), a)
		}
		if md := c.Field("metadata"); md != nil {
			if an := md.Value.Field("annotations"); an != nil && len(an.Value.YNode().Content) == 0 {
				_ = md.Value.PipeE(yaml.Clear("annotations"))
			}
		}
		out[keyOf(c)] = c
	}
	return out
}

// walk records the leaves that differ between a and b, by path. Lists of
// mappings that all have a name are matched by name (containers[name=web]).
func walk(path string, a, b *yaml.Node, out *[]FieldChange) {
	a, b = deref(a), deref(b)
	switch {
	case a == nil && b == nil:
	case a == nil || b == nil || a.Kind != b.Kind:
		*out = append(*out, FieldChange{Path: path, Base: short(a), Head: short(b)})
	case a.Kind == yaml.MappingNode:
		keys := map[string]bool{}
		for i := 0; i+1 < len(a.Content); i += 2 {
			keys[a.Content[i].Value] = true
		}
		for i := 0; i+1 < len(b.Content); i += 2 {
			keys[b.Content[i].Value] = true
		}
		for _, k := range sortedKeys(keys) {
			walk(join(path, k), value(a, k), value(b, k), out)
		}
	case a.Kind == yaml.SequenceNode:
		if an, bn, ok := byName(a), byName(b), named(a) && named(b); ok {
			names := map[string]bool{}
			for k := range an {
				names[k] = true
			}
			for k := range bn {
				names[k] = true
			}
			for _, k := range sortedKeys(names) {
				walk(fmt.Sprintf("%s[name=%s]", path, k), an[k], bn[k], out)
			}
			return
		}
		for i := 0; i < max(len(a.Content), len(b.Content)); i++ {
			walk(fmt.Sprintf("%s[%d]", path, i), at(a, i), at(b, i), out)
		}
	default:
		if a.Value != b.Value {
			*out = append(*out, FieldChange{Path: path, Base: short(a), Head: short(b)})
		}
	}
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	return n
}

func value(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func at(s *yaml.Node, i int) *yaml.Node {
	if i < len(s.Content) {
		return s.Content[i]
	}
	return nil
}

func named(s *yaml.Node) bool {
	if len(s.Content) == 0 {
		return false
	}
	seen := map[string]bool{}
	for _, c := range s.Content {
		c = deref(c)
		if c == nil || c.Kind != yaml.MappingNode {
			return false
		}
		n := value(c, "name")
		if n == nil || n.Kind != yaml.ScalarNode || seen[n.Value] {
			return false
		}
		seen[n.Value] = true
	}
	return true
}

func byName(s *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if !named(s) {
		return out
	}
	for _, c := range s.Content {
		out[value(deref(c), "name").Value] = c
	}
	return out
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// maxValue bounds a value shown in a field change.
const maxValue = 200

// short renders a value on one line, cut at maxValue.
func short(n *yaml.Node) string {
	if n == nil {
		return "(none)"
	}
	var s string
	if n.Kind == yaml.ScalarNode {
		s = n.Value
	} else {
		b, err := yaml.Marshal(n)
		if err != nil {
			return "(unprintable)"
		}
		s = strings.TrimSpace(string(b))
	}
	s = strings.ReplaceAll(s, "\n", "⏎")
	if len(s) > maxValue {
		s = s[:maxValue] + "…"
	}
	return s
}

func isSecret(k Key) bool { return k.Group == "" && k.Kind == "Secret" }

// secretFields compares two Secrets: every field but data and stringData
// as any object, and for those only key names and sizes.
func secretFields(a, b *yaml.RNode) []FieldChange {
	var out []FieldChange
	ac, bc := a.Copy(), b.Copy()
	for _, f := range []string{"data", "stringData"} {
		ad, bd := sizes(a, f), sizes(b, f)
		keys := map[string]bool{}
		for k := range ad {
			keys[k] = true
		}
		for k := range bd {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			x, inA := ad[k]
			y, inB := bd[k]
			switch {
			case !inA:
				out = append(out, FieldChange{Path: f + "." + k, Note: fmt.Sprintf("added (%d bytes)", y)})
			case !inB:
				out = append(out, FieldChange{Path: f + "." + k, Note: fmt.Sprintf("removed (%d bytes)", x)})
			case value(a.Field(f).Value.YNode(), k).Value != value(b.Field(f).Value.YNode(), k).Value:
				out = append(out, FieldChange{Path: f + "." + k, Note: fmt.Sprintf("changed (%d → %d bytes)", x, y)})
			}
		}
		_ = ac.PipeE(yaml.Clear(f))
		_ = bc.PipeE(yaml.Clear(f))
	}
	var rest []FieldChange
	walk("", ac.YNode(), bc.YNode(), &rest)
	return append(rest, out...)
}

// secretKeys lists an added or removed Secret's keys with their sizes.
func secretKeys(k Key, n *yaml.RNode, how string) []FieldChange {
	if !isSecret(k) {
		return nil
	}
	var out []FieldChange
	for _, f := range []string{"data", "stringData"} {
		s := sizes(n, f)
		keys := map[string]bool{}
		for key := range s {
			keys[key] = true
		}
		for _, key := range sortedKeys(keys) {
			out = append(out, FieldChange{Path: f + "." + key, Note: fmt.Sprintf("%s (%d bytes)", how, s[key])})
		}
	}
	return out
}

// sizes maps each key of a Secret's data (decoded) or stringData to its
// size in bytes.
func sizes(n *yaml.RNode, field string) map[string]int {
	out := map[string]int{}
	f := n.Field(field)
	if f == nil || f.Value.YNode().Kind != yaml.MappingNode {
		return out
	}
	m := f.Value.YNode()
	for i := 0; i+1 < len(m.Content); i += 2 {
		v := deref(m.Content[i+1])
		size := 0
		if v != nil {
			size = len(v.Value)
			if field == "data" {
				if d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v.Value)); err == nil {
					size = len(d)
				}
			}
		}
		out[m.Content[i].Value] = size
	}
	return out
}
