package images

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// PodSpec is a mapping that holds container lists.
type PodSpec struct {
	Node *yaml.Node
	// Path is the mapping's dotted path, lists indexed ("spec.templates[1].template.spec").
	Path string
}

// Resolve returns the mappings at a configured path of obj: a segment
// ending in "[]" expands to every item of that list.
func Resolve(obj *yaml.RNode, path string) []PodSpec {
	cur := []PodSpec{{Node: obj.YNode(), Path: ""}}
	for seg := range strings.SplitSeq(path, ".") {
		key, each := strings.CutSuffix(seg, "[]")
		var next []PodSpec
		for _, c := range cur {
			v := yamlpath.Field(c.Node, key)
			if v == nil {
				continue
			}
			p := key
			if c.Path != "" {
				p = c.Path + "." + key
			}
			if !each {
				next = append(next, PodSpec{Node: v, Path: p})
				continue
			}
			if v.Kind != yaml.SequenceNode {
				continue
			}
			for i, item := range v.Content {
				next = append(next, PodSpec{Node: item, Path: p + "[" + strconv.Itoa(i) + "]"})
			}
		}
		cur = next
	}
	out := cur[:0]
	for _, c := range cur {
		if c.Node.Kind == yaml.MappingNode {
			out = append(out, c)
		}
	}
	return out
}

// PodSpecs returns the mappings of obj that hold container lists: found at
// any depth (as Find does), plus the configured paths of its kind. Each
// carries the pod-level fields (serviceAccountName, imagePullSecrets).
func PodSpecs(obj *yaml.RNode, extra []PodSpecPath) []PodSpec {
	seen := map[*yaml.Node]bool{}
	var out []PodSpec
	for _, c := range Find(obj, extra) {
		if c.Field {
			continue
		}
		// A container's path ends in ".<list>[i].image": its pod spec is the
		// mapping two segments up.
		p := c.Path
		for range 2 {
			if i := strings.LastIndexByte(p, '.'); i >= 0 {
				p = p[:i]
			} else {
				p = ""
			}
		}
		list := c.Path[len(p):]
		if p == "" || !isPodList(list) {
			continue
		}
		node := nodeAt(obj.YNode(), p)
		if node == nil || seen[node] {
			continue
		}
		seen[node] = true
		out = append(out, PodSpec{Node: node, Path: p})
	}
	return out
}

func isPodList(suffix string) bool {
	for _, l := range containerLists {
		if strings.HasPrefix(suffix, "."+l+"[") {
			return true
		}
	}
	return false
}

// nodeAt reads a path as Find writes it: dotted keys with [i] indexes.
func nodeAt(n *yaml.Node, path string) *yaml.Node {
	for seg := range strings.SplitSeq(path, ".") {
		key, idx, _ := strings.Cut(seg, "[")
		n = yamlpath.Field(n, key)
		for idx != "" && n != nil {
			num, rest, _ := strings.Cut(idx, "]")
			i, err := strconv.Atoi(num)
			if err != nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
			idx = strings.TrimPrefix(rest, "[")
		}
		if n == nil {
			return nil
		}
	}
	return n
}

// Unmatched returns the configured paths that match no mapping in any object
// of their kind, for the kinds the render holds: a path that matches nothing
// leaves that kind's images unseen.
func Unmatched(resources []*yaml.RNode, extra []PodSpecPath) []PodSpecPath {
	var out []PodSpecPath
	for _, e := range extra {
		held, matched := false, false
		for _, obj := range resources {
			if yamlpath.String(obj.YNode(), "kind") != e.Kind {
				continue
			}
			held = true
			if e.Field && len(fieldsAt(obj.YNode(), e.Path)) > 0 || !e.Field && len(Resolve(obj, e.Path)) > 0 {
				matched = true
				break
			}
		}
		if held && !matched {
			out = append(out, e)
		}
	}
	return out
}

// ConfiguredPaths returns the pod spec paths and image fields of a gate
// config (spec.images.podSpecPaths, spec.images.fields).
func ConfiguredPaths(s *config.Spec) []PodSpecPath {
	if s == nil || len(s.Images.PodSpecPaths)+len(s.Images.Fields) == 0 {
		return nil
	}
	out := make([]PodSpecPath, 0, len(s.Images.PodSpecPaths)+len(s.Images.Fields))
	for _, p := range s.Images.PodSpecPaths {
		out = append(out, PodSpecPath{Kind: p.Kind, Path: p.Path})
	}
	for _, f := range s.Images.Fields {
		out = append(out, PodSpecPath{Kind: f.Kind, Path: f.Path, Field: true})
	}
	return out
}
