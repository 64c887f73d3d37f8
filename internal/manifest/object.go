package manifest

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// Name, Namespace, Kind and APIVersion read an object's identity without
// kyaml's filter pipeline (hot paths on large renders).
func Name(r *yaml.RNode) string { return yamlpath.String(r.YNode(), "metadata.name") }

// Namespace returns metadata.namespace, "" when unset.
func Namespace(r *yaml.RNode) string { return yamlpath.String(r.YNode(), "metadata.namespace") }

// Kind returns the object's kind.
func Kind(r *yaml.RNode) string { return yamlpath.String(r.YNode(), "kind") }

// APIVersion returns the object's apiVersion.
func APIVersion(r *yaml.RNode) string { return yamlpath.String(r.YNode(), "apiVersion") }

// Str reads a string field at a dotted path ("spec.strategy.canary.canaryService").
func Str(r *yaml.RNode, path string) string {
	return yamlpath.String(r.YNode(), path)
}

// Ref returns the reference of an object, for findings.
func Ref(r *yaml.RNode) *finding.ResourceRef {
	ref := &finding.ResourceRef{APIVersion: APIVersion(r), Kind: Kind(r), Name: Name(r), Namespace: Namespace(r)}
	if ref.Name == "" {
		ref.GenerateName = yamlpath.String(r.YNode(), "metadata.generateName")
	}
	return ref
}

// Finding builds a finding about an object, with its source file (and the
// line of the field, where the object knows it: SourceFileAt); path, when
// set, names the field and current its value.
func Finding(rule string, sev finding.Severity, r *yaml.RNode, path string, current any, format string, args ...any) finding.Finding {
	f := finding.Finding{Rule: rule, Severity: sev, Message: fmt.Sprintf(format, args...), ResourceRef: Ref(r), File: SourceFileAt(r, path)}
	if path != "" {
		f.Field = &finding.Field{Path: path, CurrentValue: current}
	}
	return f
}

// SameObject reports whether two nodes are the same object (kind,
// namespace, name), as copies of one input are.
func SameObject(a, b *yaml.RNode) bool {
	return a != nil && b != nil && Kind(a) == Kind(b) && Namespace(a) == Namespace(b) && Name(a) == Name(b)
}

// Key identifies an object in the render.
type Key struct {
	Kind, Namespace, Name string
}

// KeyOf is an object's key, as SameObject compares it.
func KeyOf(r *yaml.RNode) Key {
	return Key{Kind(r), Namespace(r), Name(r)}
}

// Index finds resources by kind, namespace and name.
type Index struct {
	byKey  map[Key]*yaml.RNode
	byKind map[string][]*yaml.RNode
}

// NewIndex indexes resources. Later duplicates win, as in a render.
func NewIndex(resources []*yaml.RNode) *Index {
	ix := &Index{byKey: map[Key]*yaml.RNode{}, byKind: map[string][]*yaml.RNode{}}
	for _, r := range resources {
		k := KeyOf(r)
		ix.byKey[k] = r
		ix.byKind[k.Kind] = append(ix.byKind[k.Kind], r)
	}
	return ix
}

// Get returns the object of that kind, namespace and name, or nil.
func (ix *Index) Get(kind, namespace, name string) *yaml.RNode {
	return ix.byKey[Key{kind, namespace, name}]
}

// Kind returns every object of a kind, in render order.
func (ix *Index) Kind(kind string) []*yaml.RNode {
	return ix.byKind[kind]
}
