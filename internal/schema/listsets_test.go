package schema

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/benchgen"
)

// guardCase is one object with the compiled schema it is validated with.
type guardCase struct {
	origin string
	c      *compiled
	obj    map[string]any
}

// guardStats counts, per pass, the objects a guard proved (upstream
// skipped) and those it left to upstream.
type guardStats struct {
	proved, upstream [2]int // prune, list sets and maps
	defaulted        int    // objects defaulting changes
}

// guardRenders returns the repository's renders: every corpus file (the
// inputs of the real-repository goldens), this package's testdata, and the
// 9,020-object bench render, each as a list of objects.
func guardRenders(t testing.TB) (origins []string, renders [][]*yaml.RNode) {
	files, objs := corpusObjects(t)
	origins, renders = append(origins, files...), append(renders, objs...)
	for i, nodes := range objs { // unknown fields, wrong types, … (mutants_test.go)
		var mutants []*yaml.RNode
		for _, n := range nodes {
			for _, m := range mutate(sample{origin: files[i], node: n}) {
				mutants = append(mutants, m.node)
			}
		}
		origins, renders = append(origins, "mutants of "+files[i]), append(renders, mutants)
	}
	err := filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".yaml" {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(raw), OmitReaderAnnotations: true}).Read()
		if err == nil {
			origins, renders = append(origins, p), append(renders, nodes)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 9020, Images: 400, Registry: "ghcr.io", Pinned: true}); err != nil {
		t.Fatal(err)
	}
	origins, renders = append(origins, "bench render"), append(renders, parse(t, buf.String()))
	return origins, renders
}

// guardCasesOf finds the compiled schema of every object of a render (its
// CRDs included, as Validate does); objects without one are left out.
func guardCasesOf(v *Validator, origin string, nodes []*yaml.RNode) []guardCase {
	render := map[string]*crdKind{}
	for _, n := range nodes {
		if n.YNode().Kind != yaml.MappingNode || n.GetKind() != "CustomResourceDefinition" || !strings.HasPrefix(n.GetApiVersion(), "apiextensions.k8s.io/") {
			continue
		}
		obj, _ := toUnstructured(n.YNode())
		if m, ok := obj.(map[string]any); ok {
			if group, kind, k, err := parseCRD(m, "render"); err == nil {
				render[group+"/"+kind] = k
			}
		}
	}
	var out []guardCase
	for i, n := range nodes {
		obj, _ := toUnstructured(n.YNode())
		m, ok := obj.(map[string]any)
		if !ok {
			continue
		}
		c, _ := v.lookup(Result{APIVersion: str(m["apiVersion"]), Kind: str(m["kind"])}, render)
		if c != nil {
			out = append(out, guardCase{origin: fmt.Sprintf("%s #%d %s/%s", origin, i, str(m["apiVersion"]), str(m["kind"])), c: c, obj: m})
		}
	}
	return out
}

// errorKeys is an ErrorList as comparable strings, sorted: upstream walks
// maps, so two runs of it may list the same errors in different orders.
func errorKeys(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s|%s|%#v|%s", e.Type, e.Field, e.BadValue, e.Detail))
	}
	sort.Strings(out)
	return out
}

// checkGuards runs each pass of the create path the guards stand in front
// of, upstream alone and guarded, on copies of the object in the state
// check gives it (nulls dropped, then pruned, then defaulted), and fails
// on any difference: the object each leaves, the unknown field paths, the
// ErrorList. A guard that says "nothing to do" must also see upstream do
// nothing. List validation runs over the cut schema check uses and over
// the whole schema, on the object as upstream's defaulting leaves it.
func checkGuards(t testing.TB, k guardCase, st *guardStats) {
	t.Helper()
	c := k.c
	m := runtime.DeepCopyJSON(k.obj)
	dropNulls(m)
	count := func(pass int, proved bool) {
		if st == nil {
			return
		}
		if proved {
			st.proved[pass]++
		} else {
			st.upstream[pass]++
		}
	}
	if !c.preserveUnknown {
		want, got := runtime.DeepCopyJSON(m), runtime.DeepCopyJSON(m)
		wantPaths := structuralpruning.PruneWithOptions(want, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		gotPaths := pruneUnknown(got, c.structural)
		if !reflect.DeepEqual(wantPaths, gotPaths) || !sameJSONBits(want, got) {
			t.Errorf("%s: pruning differs:\n upstream %q %v\n guarded  %q %v", k.origin, wantPaths, want, gotPaths, got)
		}
		noop := pruneNoop(m, c.structural)
		if noop && (len(wantPaths) != 0 || !sameJSONBits(want, m)) {
			t.Errorf("%s: pruneNoop, but pruning removes %q", k.origin, wantPaths)
		}
		count(0, noop)
		m = want
	}
	defaulted := runtime.DeepCopyJSON(m)
	structuraldefaulting.Default(defaulted, c.walks.defaults)
	if st != nil && !sameJSONBits(defaulted, m) {
		st.defaulted++
	}
	for i, s := range []*structuralschema.Structural{c.walks.listSetsMaps, c.structural} {
		checkListGuard(t, k.origin, s, defaulted, func(proved bool) {
			if i == 0 {
				count(1, proved)
			}
		})
	}
}

// sameJSONBits is reflect.DeepEqual for JSON data, with floats compared by
// their bits: NaN equals NaN (a mutant may hold one) and 0 is not -0.
func sameJSONBits(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) || (a == nil) != (b == nil) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !sameJSONBits(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) || (a == nil) != (b == nil) {
			return false
		}
		for i := range a {
			if !sameJSONBits(a[i], b[i]) {
				return false
			}
		}
		return true
	case float64:
		b, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(b)
	}
	return reflect.DeepEqual(a, b)
}

// checkListGuard compares validateListSetsAndMaps with upstream on obj.
func checkListGuard(t testing.TB, origin string, s *structuralschema.Structural, obj map[string]any, proved func(bool)) {
	t.Helper()
	want := structurallisttype.ValidateListSetsAndMaps(nil, s, runtime.DeepCopyJSON(obj))
	got := validateListSetsAndMaps(s, runtime.DeepCopyJSON(obj))
	if w, g := errorKeys(want), errorKeys(got); !reflect.DeepEqual(w, g) {
		t.Errorf("%s: list set/map validation differs:\n upstream %q\n guarded  %q", origin, w, g)
	}
	clean := listSetsMapsClean(s, obj)
	if clean && len(want) != 0 {
		t.Errorf("%s: listSetsMapsClean, but upstream reports %q", origin, errorKeys(want))
	}
	if proved != nil {
		proved(clean)
	}
}

// TestGuardsAgree: over every object of the repository's renders, the
// guarded passes give exactly what upstream gives; on real objects they
// prove most of the work unnecessary (or the guards would buy nothing).
func TestGuardsAgree(t *testing.T) {
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	origins, renders := guardRenders(t)
	var st, bench guardStats
	objects := 0
	for i, nodes := range renders {
		for _, k := range guardCasesOf(v, origins[i], nodes) {
			objects++
			s := &st
			if origins[i] == "bench render" {
				s = &bench
			}
			checkGuards(t, k, s)
		}
	}
	t.Logf("%d objects; corpus: proved %v, upstream %v, %d defaulted; bench render: proved %v, upstream %v, %d defaulted (prune, list sets/maps)",
		objects, st.proved, st.upstream, st.defaulted, bench.proved, bench.upstream, bench.defaulted)
	if st.upstream[0] == 0 || st.upstream[1] == 0 || st.defaulted == 0 || bench.defaulted == 0 {
		t.Errorf("the renders do not exercise upstream pruning, list validation or defaulting")
	}
	if objects < 10000 {
		t.Errorf("only %d objects compared", objects)
	}
	for pass, name := range []string{"prune", "list sets/maps"} {
		if bench.proved[pass] < 9020*9/10 {
			t.Errorf("%s: the guard proves only %d of the bench render's objects", name, bench.proved[pass])
		}
	}
}

// listSite is a list under an x-kubernetes-list-type set or map schema,
// found where ValidateListSetsAndMaps looks.
type listSite struct {
	s   *structuralschema.Structural
	get func() []any
	set func([]any)
}

// listSites lists the set and map lists of obj under s, in a fixed order.
func listSites(s *structuralschema.Structural, obj map[string]any) []listSite {
	var out []listSite
	var value func(s *structuralschema.Structural, get func() any, set func(any))
	object := func(s *structuralschema.Structural, m map[string]any) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := s
			if p, ok := s.Properties[k]; ok {
				sub = &p
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
				sub = s.AdditionalProperties.Structural
			} else {
				continue
			}
			value(sub, func() any { return m[k] }, func(v any) { m[k] = v })
		}
	}
	value = func(s *structuralschema.Structural, get func() any, set func(any)) {
		switch x := get().(type) {
		case map[string]any:
			object(s, x)
		case []any:
			if s.XListType != nil && (*s.XListType == "set" || *s.XListType == "map") {
				out = append(out, listSite{s: s, get: func() []any { l, _ := get().([]any); return l }, set: func(l []any) { set(l) }})
			}
			if s.Items != nil {
				for i := range x {
					value(s.Items, func() any { return x[i] }, func(v any) { x[i] = v })
				}
			}
		}
	}
	if s != nil {
		object(s, obj)
	}
	return out
}

// listMutations are the edits made to a set or map list: duplicates,
// missing and null keys, keys and elements of the wrong type, keys that
// only JSON tells apart or together, and lists too long to compare
// pairwise.
func listMutations(s *structuralschema.Structural) []func([]any) []any {
	cp := func(v any) any { return runtime.DeepCopyJSONValue(v) }
	setKey := func(l []any, i int, v any, drop bool) []any {
		if i >= len(l) {
			return nil
		}
		m, ok := l[i].(map[string]any)
		if !ok || len(s.XListMapKeys) == 0 {
			return nil
		}
		m = cp(m).(map[string]any)
		if drop {
			delete(m, s.XListMapKeys[0])
		} else {
			m[s.XListMapKeys[0]] = v
		}
		l[i] = m
		return l
	}
	muts := []func([]any) []any{
		func(l []any) []any { // duplicate the first element
			if len(l) == 0 {
				return nil
			}
			return append(l, cp(l[0]))
		},
		func(l []any) []any { return append(l, nil, nil) },
		func(l []any) []any { return append(l, nil) },
		func(l []any) []any { return []any{"x"} },
		func(l []any) []any { return append(l, "x", "x") },
		func(l []any) []any { return append(l, int64(1), float64(1)) },
		func(l []any) []any { return append(l, map[string]any{"a": int64(1)}, map[string]any{"a": float64(1)}) },
		func(l []any) []any { return append(l, []any{"a"}, []any{"b"}) },
		func(l []any) []any { return append(l, math.NaN(), math.NaN()) },
		func(l []any) []any { return append(l, map[string]any{"n": math.Inf(1)}) },
		func(l []any) []any { return append(l, float64(0), math.Copysign(0, -1)) },
		func(l []any) []any { return append(l, "\xff", "\xfe") },
		func(l []any) []any { // too long to compare pairwise, all distinct
			var out []any
			for i := 0; i <= maxPairwise; i++ {
				if len(l) > 0 {
					if m, ok := l[0].(map[string]any); ok && len(s.XListMapKeys) > 0 {
						m = cp(m).(map[string]any)
						m[s.XListMapKeys[0]] = fmt.Sprintf("k%d", i)
						out = append(out, m)
						continue
					}
				}
				out = append(out, fmt.Sprintf("k%d", i))
			}
			return out
		},
		func(l []any) []any { return setKey(l, 0, nil, true) },
		func(l []any) []any { // two elements without the key
			if l = setKey(l, 0, nil, true); l != nil {
				l = append(l, cp(l[0]))
			}
			return l
		},
		func(l []any) []any { return setKey(l, 0, nil, false) },
		func(l []any) []any { return setKey(l, 0, map[string]any{"x": int64(1)}, false) },
		func(l []any) []any { return setKey(l, 0, []any{"x"}, false) },
		func(l []any) []any { return setKey(l, 0, math.NaN(), false) },
		func(l []any) []any { return setKey(l, 0, "\xff", false) },
		func(l []any) []any { // the same number as an int and a float
			if len(l) < 2 {
				return nil
			}
			if l = setKey(l, 0, int64(7), false); l != nil {
				l = setKey(l, 1, float64(7), false)
			}
			return l
		},
		func(l []any) []any { // invalid UTF-8 keys that JSON encodes alike
			if len(l) < 2 {
				return nil
			}
			if l = setKey(l, 0, "\xff", false); l != nil {
				l = setKey(l, 1, "\xfe", false)
			}
			return l
		},
		func(l []any) []any { // a second element with the same key, the rest different
			if len(l) == 0 {
				return nil
			}
			m, ok := l[0].(map[string]any)
			if !ok {
				return nil
			}
			m = cp(m).(map[string]any)
			m["zz-other"] = "y"
			return append(l, m)
		},
	}
	return muts
}

// TestListGuardMutants: the list guard agrees with upstream on mutants of
// every set and map list of the corpus' objects and of the first objects
// of each kind in the bench render.
func TestListGuardMutants(t *testing.T) {
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	origins, renders := guardRenders(t)
	perKind := map[string]int{}
	mutants, reported := 0, 0
	for i, nodes := range renders {
		if strings.HasPrefix(origins[i], "mutants of ") {
			continue // TestGuardsAgree has them; mutants of mutants add little
		}
		for _, k := range guardCasesOf(v, origins[i], nodes) {
			if origins[i] == "bench render" {
				kind := str(k.obj["kind"])
				if perKind[kind] >= 3 {
					continue
				}
				perKind[kind]++
			}
			for _, s := range []*structuralschema.Structural{k.c.walks.listSetsMaps, k.c.structural} {
				n := len(listSites(s, k.obj))
				for site := 0; site < n; site++ {
					for j, mut := range listMutations(listSites(s, k.obj)[site].s) {
						obj := runtime.DeepCopyJSON(k.obj)
						ls := listSites(s, obj)[site]
						l := mut(append([]any(nil), ls.get()...))
						if l == nil {
							continue
						}
						ls.set(l)
						mutants++
						if len(structurallisttype.ValidateListSetsAndMaps(nil, s, obj)) > 0 {
							reported++
						}
						origin := fmt.Sprintf("%s, list %d, mutation %d", k.origin, site, j)
						checkListGuard(t, origin, s, obj, nil)
						checkGuards(t, guardCase{origin: origin, c: k.c, obj: obj}, nil)
					}
				}
			}
		}
	}
	t.Logf("%d mutants, %d with errors upstream", mutants, reported)
	if mutants < 1000 || reported < mutants/3 {
		t.Errorf("%d mutants, %d with errors upstream: the mutants do not exercise the guard", mutants, reported)
	}
}

// syntheticListSchema has a list of each kind the guard tells apart: a
// set, map lists with one, two and no key fields, lists of lists, and
// additional properties of lists; defaults below and beside them.
func syntheticListSchema() *structuralschema.Structural {
	str := func(t string) *string { return &t }
	scalar := structuralschema.Structural{Extensions: structuralschema.Extensions{XIntOrString: true}}
	obj := func() *structuralschema.Structural {
		return &structuralschema.Structural{
			Generic:    structuralschema.Generic{Type: "object"},
			Properties: map[string]structuralschema.Structural{"a": scalar, "b": scalar, "c": {Generic: structuralschema.Generic{Type: "string", Default: structuralschema.JSON{Object: "d"}}}},
			Extensions: structuralschema.Extensions{XPreserveUnknownFields: true},
		}
	}
	list := func(kind string, keys ...string) structuralschema.Structural {
		return structuralschema.Structural{
			Generic:    structuralschema.Generic{Type: "array"},
			Items:      obj(),
			Extensions: structuralschema.Extensions{XListType: str(kind), XListMapKeys: keys},
		}
	}
	set := structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &scalar, Extensions: structuralschema.Extensions{XListType: str("set")}}
	lists := map[string]structuralschema.Structural{
		"set":    set,
		"single": list("map", "a"),
		"multi":  list("map", "a", "b"),
		"nokeys": list("map"),
		"nested": {Generic: structuralschema.Generic{Type: "array"}, Items: &set},
	}
	return &structuralschema.Structural{
		Generic:    structuralschema.Generic{Type: "object"},
		Properties: lists,
		AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: &structuralschema.Structural{
			Generic:    structuralschema.Generic{Type: "object"},
			Properties: lists,
		}},
	}
}

// addBenchSeeds seeds a fuzz target with each kind of the bench render
// (a small one) and a Deployment.
func addBenchSeeds(f *testing.F) {
	var buf bytes.Buffer
	if err := benchgen.Write(&buf, benchgen.Options{Objects: 8, Images: 4, Registry: "ghcr.io", Pinned: true}); err != nil {
		f.Fatal(err)
	}
	for _, doc := range strings.Split(buf.String(), "\n---\n") {
		f.Add(doc)
	}
	f.Add(deployment)
}

// FuzzListSetsGuard: on any object (YAML), under the schema of its kind
// when there is one and under a synthetic schema with every kind of list,
// the guarded list validation (and pruning)
// give what upstream gives. Seeds: the bench render's kinds, duplicates,
// missing and non-scalar keys, nulls and wrong types.
func FuzzListSetsGuard(f *testing.F) {
	addBenchSeeds(f)
	for _, seed := range []string{
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, finalizers: [a, a]}\nspec:\n  containers:\n  - {name: a, image: x, ports: [{containerPort: 80}, {containerPort: 80, protocol: TCP}]}\n  - {name: a, image: y}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80}, {port: 80.0}, {port: '80'}, ~, x]\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{image: x}, {image: y}, {name: [a]}, {name: {b: c}}]\n",
		"set: [1, 1.0, '1', true, ~, .nan, .nan, -0.0, 0.0]\nsingle: [{a: 1}, {a: 1.0}, {b: 1}, {}, ~]\nmulti: [{a: 1, b: x}, {a: 1.0, b: x}, {a: .nan}, {a: .nan}]\nnokeys: [{a: 1}, {a: 2}]\nnested: [[a, b], [a, a]]\nx: {set: [[a], [a]], single: [{a: {x: 1}}, {a: {x: 1}}]}\n",
		"single: [{a: x, b: 1}]\nmulti: [{a: x, b: 1}, {a: x, b: 2}, {a: y}]\nnokeys: [{a: 1}]\nset: [a, b, c]\ny: {c: ~, multi: [~]}\n",
	} {
		f.Add(seed)
	}
	v, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	syn := syntheticListSchema()
	synthetic := &compiled{structural: syn, walks: walksOf(syn)}
	f.Fuzz(func(t *testing.T, doc string) {
		node, err := yaml.Parse(doc)
		if err != nil {
			return
		}
		obj, _ := toUnstructured(node.YNode())
		m, ok := obj.(map[string]any)
		if !ok {
			return
		}
		checkGuards(t, guardCase{origin: "synthetic", c: synthetic, obj: m}, nil)
		checkListGuard(t, "synthetic, nulls kept", syn, m, nil)
		if node.YNode().Kind != yaml.MappingNode {
			return
		}
		if c, _ := v.lookup(Result{APIVersion: str(m["apiVersion"]), Kind: str(m["kind"])}, nil); c != nil {
			checkGuards(t, guardCase{origin: str(m["kind"]), c: c, obj: m}, nil)
		}
	})
}
