package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Entry is one spec.policies or spec.schema.crds entry: a path to a file or
// directory, which the kubectl plugin reads, or an object written inline,
// which the KRM function uses too (it sees no files):
//
//	policies:
//	- policies/                                   # a path
//	- apiVersion: admissionregistration.k8s.io/v1 # an inline object
//	  kind: ValidatingAdmissionPolicy
//	  metadata: {name: replicas}
//	  spec: {…}
type Entry struct {
	// Path is the file or directory; empty for an inline object.
	Path string
	// Object is the inline object; nil for a path.
	Object map[string]any
}

// Paths returns the entries' paths; inline objects are left out.
func Paths(es []Entry) []string {
	var out []string
	for _, e := range es {
		if e.Object == nil {
			out = append(out, e.Path)
		}
	}
	return out
}

// Inline returns the entries' inline objects.
func Inline(es []Entry) []map[string]any {
	var out []map[string]any
	for _, e := range es {
		if e.Object != nil {
			out = append(out, e.Object)
		}
	}
	return out
}

// PathEntries makes entries of paths.
func PathEntries(paths ...string) []Entry {
	out := make([]Entry, len(paths))
	for i, p := range paths {
		out[i] = Entry{Path: p}
	}
	return out
}

// MarshalJSON writes the path as a string, an inline object as itself.
func (e Entry) MarshalJSON() ([]byte, error) {
	if e.Object != nil {
		return json.Marshal(e.Object)
	}
	return json.Marshal(e.Path)
}

// UnmarshalJSON reads a string as a path and a mapping as an inline object.
func (e *Entry) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		*e = Entry{}
		return json.Unmarshal(b, &e.Path)
	case len(b) > 0 && b[0] == '{':
		*e = Entry{}
		return json.Unmarshal(b, &e.Object)
	}
	return fmt.Errorf("%s is neither a path nor an object", b)
}

// InlineNodes returns the inline objects of a list of entries as kyaml
// nodes, each with its place ("spec.policies[2]" for field
// "spec.policies").
func InlineNodes(field string, es []Entry) (places []string, nodes []*yaml.RNode, err error) {
	for i, e := range es {
		if e.Object == nil {
			continue
		}
		n, err := yaml.FromMap(e.Object)
		if err != nil {
			return nil, nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		places = append(places, fmt.Sprintf("%s[%d]", field, i))
		nodes = append(nodes, n)
	}
	return places, nodes, nil
}

// InlineCRDs returns the CustomResourceDefinitions written inline in
// spec.schema.crds; an inline object of another kind is an error.
func (s *Schema) InlineCRDs() ([]*yaml.RNode, error) {
	places, nodes, err := InlineNodes("spec.schema.crds", s.CRDs)
	if err != nil {
		return nil, err
	}
	for i, n := range nodes {
		if n.GetKind() != "CustomResourceDefinition" || !strings.HasPrefix(n.GetApiVersion(), "apiextensions.k8s.io/") {
			return nil, fmt.Errorf("%s: %s %s is not a CustomResourceDefinition", places[i], n.GetApiVersion(), n.GetKind())
		}
	}
	return nodes, nil
}
