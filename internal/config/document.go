package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// oneDocument checks that data holds exactly one YAML document and returns
// it re-encoded so that a plain scalar written where the schema wants a
// string stays the word the user wrote. The strict decoder reads YAML 1.1,
// where off, no, yes, on, y and n are booleans: `digest: off` and
// `rules: {x: off}`, as the README documents them, would otherwise be
// refused as "false". A second document would silently be ignored by the
// decoder, so it is an error: a config file holds one Gate or Pin.
//
// It also rewrites the long form of spec.rules entries into the short one
// and returns the rules made unwaivable (ruleSettings).
func oneDocument(data []byte) ([]byte, []string, error) {
	d := yaml.NewDecoder(bytes.NewReader(data))
	var doc *yaml.Node
	for n := 0; ; n++ {
		var next yaml.Node
		err := d.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("decoding gate config: %w", err)
		}
		if empty(&next) {
			continue
		}
		if doc != nil {
			return nil, nil, errors.New("the config holds more than one YAML document; it must be exactly one Gate or Pin object")
		}
		doc = &next
	}
	if doc == nil {
		return nil, nil, errors.New("the config is empty; it must be one Gate or Pin object")
	}
	unwaivable, err := ruleSettings(doc)
	if err != nil {
		return nil, nil, err
	}
	quoteStrings(doc, reflect.TypeOf(Object{}))
	var out bytes.Buffer
	e := yaml.NewEncoder(&out)
	if err := e.Encode(doc); err != nil {
		return nil, nil, fmt.Errorf("decoding gate config: %w", err)
	}
	return out.Bytes(), unwaivable, e.Close()
}

func empty(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode {
		return len(n.Content) == 0 || empty(n.Content[0])
	}
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// quoteStrings marks every plain scalar whose field is a string as a
// string, walking the node tree along the Go type.
func quoteStrings(n *yaml.Node, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.DocumentNode:
		for _, c := range n.Content {
			quoteStrings(c, t)
		}
	case t.Kind() == reflect.String && n.Kind == yaml.ScalarNode && n.Style == 0 && n.Tag != "!!null":
		n.Tag = "!!str"
		n.Style = yaml.DoubleQuotedStyle
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := jsonFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ft, ok := fields[n.Content[i].Value]; ok {
				quoteStrings(n.Content[i+1], ft)
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			quoteStrings(n.Content[i], t.Elem())
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			quoteStrings(c, t.Elem())
		}
	}
}
