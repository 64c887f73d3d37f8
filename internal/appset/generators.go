package appset

import (
	"encoding/json"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	sigsyaml "sigs.k8s.io/yaml"
)

// params returns the param sets of one generator type of a generator entry
// g at field. genParams, when set, are a matrix's first generator's params:
// the entry is interpolated with them first. The entry's selector filters
// the result on the flattened params.
func (e *expander) params(g map[string]any, kind, field string, genParams map[string]any) ([]params, error) {
	if why, ok := offline[kind]; ok {
		return nil, &NoVerdictError{Generator: field + "." + kind, Reason: why}
	}
	if len(genParams) > 0 {
		interpolated, err := e.interpolate(g, genParams)
		if err != nil {
			return nil, fmt.Errorf("%s: interpolating with the first generator's params: %w", field, err)
		}
		g = interpolated
	}
	body, _ := g[kind].(map[string]any)
	var ps []params
	var err error
	switch kind {
	case "list":
		ps, err = e.list(body, field+".list")
	case "git":
		ps, err = e.git(body, field+".git")
	case "matrix":
		ps, err = e.matrix(body, field+".matrix")
	case "merge":
		ps, err = e.merge(body, field+".merge")
	}
	if err != nil {
		return nil, err
	}
	return selectParams(g["selector"], ps, field)
}

// selectParams keeps the param sets a generator's selector matches, on
// their flattened string form.
func selectParams(sel any, ps []params, field string) ([]params, error) {
	if sel == nil {
		return ps, nil
	}
	var ls metav1.LabelSelector
	if err := remarshal(sel, &ls); err != nil {
		return nil, fmt.Errorf("%s.selector: %w", field, err)
	}
	s, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("%s.selector: %w", field, err)
	}
	var out []params
	for _, p := range ps {
		if s.Matches(labels.Set(flatten(p.values))) {
			out = append(out, p)
		}
	}
	return out, nil
}

// list: each element is a param set; without goTemplate every value must
// be a string, and a values: map becomes values.KEY params.
func (e *expander) list(body map[string]any, field string) ([]params, error) {
	elems, _ := body["elements"].([]any)
	if err := e.tooMany(field+".elements", int64(len(elems))); err != nil {
		return nil, err
	}
	var out []params
	for i, el := range elems {
		m, ok := el.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s.elements[%d]: not an object", field, i)
		}
		p, err := e.listParams(m)
		if err != nil {
			return nil, fmt.Errorf("%s.elements[%d]: %w", field, i, err)
		}
		out = append(out, params{values: p, origin: fmt.Sprintf("%s.elements[%d] %s", field, i, describe(m))})
	}
	if y, _ := body["elementsYaml"].(string); y != "" {
		var more []map[string]any
		if err := sigsyaml.Unmarshal([]byte(y), &more); err != nil {
			return nil, fmt.Errorf("%s.elementsYaml: %w", field, err)
		}
		if err := e.tooMany(field+".elementsYaml", int64(len(out)+len(more))); err != nil {
			return nil, err
		}
		for i, m := range more {
			out = append(out, params{values: m, origin: fmt.Sprintf("%s.elementsYaml[%d] %s", field, i, describe(m))})
		}
	}
	return out, nil
}

func (e *expander) listParams(m map[string]any) (map[string]any, error) {
	if e.spec.GoTemplate {
		return m, nil
	}
	p := map[string]any{}
	for k, v := range m {
		if k == "values" {
			values, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("values is not a map")
			}
			for vk, vv := range values {
				s, ok := vv.(string)
				if !ok {
					return nil, fmt.Errorf("values.%s is not a string; without goTemplate every list value must be one", vk)
				}
				p["values."+vk] = s
			}
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s is not a string; without goTemplate every list value must be one", k)
		}
		p[k] = s
	}
	return p, nil
}

// matrix: the cartesian product of two child generators; the second is
// interpolated with each param set of the first.
func (e *expander) matrix(body map[string]any, field string) ([]params, error) {
	children, _ := body["generators"].([]any)
	if len(children) != 2 {
		return nil, fmt.Errorf("%s: needs exactly two child generators, has %d", field, len(children))
	}
	first, err := e.child(children[0], field+".generators[0]", nil)
	if err != nil {
		return nil, err
	}
	var out []params
	for i, a := range first {
		second, err := e.child(children[1], field+".generators[1]", a.values)
		if err != nil {
			return nil, err
		}
		// The product is judged before it is made: from the first
		// element's share, then as it grows.
		if i == 0 {
			if err := e.tooMany(field, int64(len(first))*int64(len(second))); err != nil {
				return nil, err
			}
		}
		if err := e.tooMany(field, int64(len(out)+len(second))); err != nil {
			return nil, err
		}
		for _, b := range second {
			merged, err := e.combine(a.values, b.values)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", field, err)
			}
			out = append(out, params{values: merged, origin: joinOrigins(" × ", a.origin, b.origin)})
		}
	}
	return out, nil
}

// combine merges a matrix's two param sets: with goTemplate the first
// wins; without, a key both set differently is an error (Argo CD's
// CombineStringMaps).
func (e *expander) combine(a, b map[string]any) (map[string]any, error) {
	if e.spec.GoTemplate {
		out := deepCopyMap(b)
		mergeOverride(out, a)
		return out, nil
	}
	out := maps.Clone(a)
	for k, v := range b {
		if prev, ok := out[k]; ok && fmt.Sprint(prev) != fmt.Sprint(v) {
			return nil, fmt.Errorf("both generators set param %q, to %q and %q", k, fmt.Sprint(prev), fmt.Sprint(v))
		}
		out[k] = v
	}
	return out, nil
}

// merge: the first child's param sets, each overridden by the param sets
// of the other children with the same values of mergeKeys. Param sets of
// later children that match no base param set are dropped.
func (e *expander) merge(body map[string]any, field string) ([]params, error) {
	children, _ := body["generators"].([]any)
	if len(children) < 2 {
		return nil, fmt.Errorf("%s: needs at least two child generators, has %d", field, len(children))
	}
	var keys []string
	if err := remarshal(body["mergeKeys"], &keys); err != nil || len(keys) == 0 {
		return nil, fmt.Errorf("%s.mergeKeys: at least one merge key is required", field)
	}
	base, err := e.child(children[0], field+".generators[0]", nil)
	if err != nil {
		return nil, err
	}
	index, err := byMergeKey(base, keys, field+".generators[0]")
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(children); i++ {
		cf := fmt.Sprintf("%s.generators[%d]", field, i)
		other, err := e.child(children[i], cf, nil)
		if err != nil {
			return nil, err
		}
		overrides, err := byMergeKey(other, keys, cf)
		if err != nil {
			return nil, err
		}
		for k, bi := range index {
			o, ok := overrides[k]
			if !ok {
				continue
			}
			p := &base[bi]
			if e.spec.GoTemplate {
				mergeOverride(p.values, other[o].values)
			} else {
				maps.Copy(p.values, other[o].values)
			}
			p.origin = joinOrigins(" + ", p.origin, other[o].origin)
		}
	}
	return base, nil
}

// byMergeKey indexes param sets by their merge-key values; two with the
// same values are an error, as in Argo CD.
func byMergeKey(ps []params, keys []string, field string) (map[string]int, error) {
	out := map[string]int{}
	for i, p := range ps {
		k := map[string]any{}
		for _, key := range keys {
			k[key] = p.values[key]
		}
		s := describe(k)
		if _, dup := out[s]; dup {
			return nil, fmt.Errorf("%s: two param sets have the same merge keys %s", field, s)
		}
		out[s] = i
	}
	return out, nil
}

// child expands a matrix or merge child: exactly one generator type.
func (e *expander) child(c any, field string, genParams map[string]any) ([]params, error) {
	g, ok := c.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a generator", field)
	}
	kinds, err := generatorKinds(g, field)
	if err != nil {
		return nil, err
	}
	if len(kinds) > 1 {
		return nil, fmt.Errorf("%s: a child generator sets one type, this sets %v", field, kinds)
	}
	ps, err := e.params(deepCopyMap(g), kinds[0], field, genParams)
	if err != nil {
		return nil, err
	}
	for i := range ps {
		ps[i].values = deepCopyMap(ps[i].values)
	}
	return ps, nil
}

// remarshal converts a decoded JSON value into a typed one.
func remarshal(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// deepCopyMap copies a decoded JSON map.
func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return deepCopy(m).(map[string]any)
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

// mergeOverride merges src into dst, src winning, maps merged key by key
// (mergo.Merge with WithOverride, as Argo CD merges goTemplate params).
func mergeOverride(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeOverride(dm, sm)
				continue
			}
		}
		if isZero(v) {
			if _, ok := dst[k]; ok {
				continue
			}
		}
		dst[k] = deepCopy(v)
	}
}

// flatten turns nested params into dotted string keys (a.b, list.0), as
// Argo CD flattens params for selectors and the files generator.
func flatten(m map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 && prefix != "" {
				out[prefix] = "map[]"
			}
			for k, x := range t {
				walk(join(prefix, k), x)
			}
		case []any:
			if len(t) == 0 && prefix != "" {
				out[prefix] = "[]"
			}
			for i, x := range t {
				walk(join(prefix, fmt.Sprint(i)), x)
			}
		case nil:
			out[prefix] = "<nil>"
		default:
			out[prefix] = fmt.Sprint(t)
		}
	}
	walk("", m)
	return out
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
