package schema

import (
	"sort"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaulter applies a structural schema's defaults to an object exactly
// as the API server's structural defaulting does
// (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting.Default),
// compiled once per kind from the schema cut down to the paths that lead
// to a default (walks.defaults).
//
// Why not call Default itself: it ranges over every key of every mapping
// it visits and copies each property's schema, a struct of some 400
// bytes, to look it up; on a render of built-in workloads that was ~5% of
// a check's CPU, for the few properties that have a default. This walk
// looks up only those properties, in a slice built once. Where the
// schema keeps additional properties every key must be looked at, as
// Default does. TestCutWalksAgree and FuzzDefaultsAgree hold it equal to
// Default.
type defaulter struct {
	// props are the properties with a default or with defaults below
	// them; byName indexes every property of the cut schema (shells
	// included), needed only beside addl.
	props  []defaultProp
	byName map[string]*defaultProp
	// addl is the additional properties' schema, when the cut kept it.
	addl *defaultSlot
	// items is the items' schema, when the cut kept it.
	items *defaultSlot
}

// defaultSlot is one value position: its default (nil: none), whether
// null is allowed there, and the walk below it (nil: nothing to do).
type defaultSlot struct {
	value    any
	nullable bool
	below    *defaulter
}

// defaultProp is a property's slot under its name.
type defaultProp struct {
	name string
	defaultSlot
}

// compileDefaults builds the walk for a cut schema; nil when it has
// nothing to do.
func compileDefaults(s *structuralschema.Structural) *defaulter {
	if s == nil || (len(s.Properties) == 0 && s.Items == nil && (s.AdditionalProperties == nil || s.AdditionalProperties.Structural == nil)) {
		return nil
	}
	d := &defaulter{}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names) // a stable walk; the outcome does not depend on it
	for _, name := range names {
		p := s.Properties[name]
		d.props = append(d.props, defaultProp{name: name, defaultSlot: slotOf(&p)})
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		slot := slotOf(s.AdditionalProperties.Structural)
		d.addl = &slot
		d.byName = make(map[string]*defaultProp, len(d.props))
		for i := range d.props {
			d.byName[d.props[i].name] = &d.props[i]
		}
	}
	if s.Items != nil {
		slot := slotOf(s.Items)
		d.items = &slot
	}
	return d
}

func slotOf(s *structuralschema.Structural) defaultSlot {
	return defaultSlot{value: s.Default.Object, nullable: s.Nullable, below: compileDefaults(s)}
}

// apply defaults x (a mapping, a list or a scalar) in place.
func (d *defaulter) apply(x any) {
	if d == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for i := range d.props {
			p := &d.props[i]
			if p.value == nil {
				continue
			}
			if v, found := x[p.name]; !found || (v == nil && !p.nullable) {
				x[p.name] = runtime.DeepCopyJSONValue(p.value)
			}
		}
		if d.addl == nil {
			for i := range d.props {
				p := &d.props[i]
				if p.below == nil {
					continue
				}
				if v, found := x[p.name]; found {
					p.below.apply(v)
				}
			}
			return
		}
		for k, v := range x {
			if p := d.byName[k]; p != nil {
				p.below.apply(v)
				continue
			}
			if v == nil && !d.addl.nullable {
				v = runtime.DeepCopyJSONValue(d.addl.value)
				x[k] = v
			}
			d.addl.below.apply(v)
		}
	case []any:
		if d.items == nil {
			return
		}
		for i, v := range x {
			if v == nil && !d.items.nullable {
				v = runtime.DeepCopyJSONValue(d.items.value)
				x[i] = v
			}
			d.items.below.apply(v)
		}
	}
}
