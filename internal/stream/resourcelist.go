package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// CheckResourceList checks a KRM function's input before the framework
// reads it: exactly one document, a ResourceList with an items list (a
// ResourceList without items would otherwise read as an empty render and
// pass), every item an object, no duplicate keys anywhere.
func CheckResourceList(data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML reader failed: %v", r)
		}
	}()
	d := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := d.Decode(&doc); err != nil {
		return fmt.Errorf("parsing the ResourceList: %w", err)
	}
	var extra yaml.Node
	if err := d.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("the input holds more than one document; a KRM function reads one ResourceList")
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return errors.New("the input is not a ResourceList object")
	}
	rl := yaml.NewRNode(doc.Content[0])
	if k := rl.GetKind(); k != "ResourceList" {
		return fmt.Errorf("the input is a %q, not a ResourceList", k)
	}
	if err := Normalize(rl); err != nil {
		return fmt.Errorf("the ResourceList: %w", err)
	}
	items := rl.Field("items")
	if items == nil || items.Value.YNode().Kind != yaml.SequenceNode {
		return errors.New("the ResourceList has no items list: nothing to check is no verdict")
	}
	for i, e := range items.Value.YNode().Content {
		if e.Kind != yaml.MappingNode {
			return fmt.Errorf("ResourceList item %d (line %d) is a %s, not an object", i, e.Line, kindName(e))
		}
	}
	return nil
}
