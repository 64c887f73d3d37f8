package schema

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
)

// Pruning walks the whole object along its schema, allocating as it goes
// (a heap copy of each property's schema, a path per field): pruneUnknown
// first proves, without allocating, when it would find nothing.

// pruneUnknown is structuralpruning.PruneWithOptions(obj, s, true, …)
// tracking the unknown fields' paths, which it returns. A read-only walk
// first tries to prove that pruning would delete nothing (and so record
// nothing), which holds for every object without an unknown field; only
// when it cannot is the upstream function called.
func pruneUnknown(obj map[string]any, s *structuralschema.Structural) []string {
	if pruneNoop(obj, s) {
		return nil
	}
	return structuralpruning.PruneWithOptions(obj, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
}

// pruneNoop reports whether PruneWithOptions(obj, s, true, …) would
// delete nothing, and so record no unknown field (it records a field only
// where it deletes one). The object's root is an embedded resource there
// (apiVersion, kind and metadata left alone), as PruneWithOptions makes it;
// with no schema, every other field of it is pruned.
func pruneNoop(obj map[string]any, s *structuralschema.Structural) bool {
	for k, v := range obj {
		if metaFields[k] {
			continue
		}
		if s == nil {
			return false
		}
		if !pruneKeyNoop(s, k, v, s.XPreserveUnknownFields) {
			return false
		}
	}
	return true
}

// metaFields are the fields pruning leaves alone in an embedded resource.
var metaFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// pruneValueNoop mirrors pruning's prune(x, s).
func pruneValueNoop(x any, s *structuralschema.Structural) bool {
	if s != nil && s.XPreserveUnknownFields {
		return skipPruneNoop(x, s)
	}
	switch x := x.(type) {
	case map[string]any:
		if s == nil {
			return len(x) == 0
		}
		for k, v := range x {
			if s.XEmbeddedResource && metaFields[k] {
				continue
			}
			if !pruneKeyNoop(s, k, v, false) {
				return false
			}
		}
	case []any:
		var items *structuralschema.Structural
		if s != nil {
			items = s.Items
		}
		for _, v := range x {
			if !pruneValueNoop(v, items) {
				return false
			}
		}
	}
	return true
}

// pruneKeyNoop: the value v of field k of an object under s (not nil) is
// left as it is; preserve: s keeps unknown fields.
func pruneKeyNoop(s *structuralschema.Structural, k string, v any, preserve bool) bool {
	if prop, ok := s.Properties[k]; ok {
		return pruneValueNoop(v, &prop)
	}
	if s.AdditionalProperties != nil {
		return pruneValueNoop(v, s.AdditionalProperties.Structural)
	}
	return preserve
}

// skipPruneNoop mirrors pruning's skipPrune(x, s), under a schema that
// keeps unknown fields.
func skipPruneNoop(x any, s *structuralschema.Structural) bool {
	if s == nil {
		return true
	}
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if s.XEmbeddedResource && metaFields[k] {
				continue
			}
			if !pruneKeyNoop(s, k, v, true) {
				return false
			}
		}
	case []any:
		for _, v := range x {
			if !skipPruneNoop(v, s.Items) {
				return false
			}
		}
	}
	return true
}
