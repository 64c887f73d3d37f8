package schema

import (
	"reflect"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestCutWalksAgree: defaulting and list set/map validation over the
// schema cut down by walksOf give exactly what they give over the whole
// schema (the defaulted object, the errors), for every object of the
// corpus, its mutants, and objects whose list-map keys come from defaults
// (ports without protocol) and duplicate map keys.
func TestCutWalksAgree(t *testing.T) {
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*yaml.RNode
	files, objs := corpusObjects(t)
	for i, f := range files {
		for _, n := range objs[i] {
			nodes = append(nodes, n)
			for _, m := range mutate(sample{origin: f, node: n}) {
				nodes = append(nodes, m.node)
			}
		}
	}
	for _, doc := range []string{
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x\n    ports: [{containerPort: 80}, {containerPort: 80}, {containerPort: 80, protocol: UDP}]\n  - name: a\n    image: y\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 80}, {port: 80, protocol: TCP}]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c, image: x, ports: [{containerPort: 1}]}]\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: k, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 1, topologyKey: k, whenUnsatisfiable: DoNotSchedule}]\n",
	} {
		nodes = append(nodes, yaml.MustParse(doc))
	}
	cut, compared, defaulted := 0, 0, 0
	for _, n := range nodes {
		obj, _ := toUnstructured(n.YNode())
		m, ok := obj.(map[string]any)
		if !ok {
			continue
		}
		base := Result{APIVersion: str(m["apiVersion"]), Kind: str(m["kind"])}
		c, _ := v.lookup(base, nil)
		if c == nil {
			continue
		}
		dropNulls(m)
		compared++
		if c.walks.defaults != c.structural && c.walks.listSetsMaps != c.structural {
			cut++
		}
		full := runtime.DeepCopyJSON(m)
		short := runtime.DeepCopyJSON(m)
		structuraldefaulting.Default(full, c.structural)
		if c.walks.defaults != nil {
			structuraldefaulting.Default(short, c.walks.defaults)
		}
		if !reflect.DeepEqual(full, short) {
			t.Errorf("%s %s: defaulting over the cut schema differs:\n full %v\n cut  %v", base.APIVersion, base.Kind, full, short)
			continue
		}
		walked := runtime.DeepCopyJSON(m)
		c.walks.defaulter.apply(walked)
		if !reflect.DeepEqual(full, walked) {
			t.Errorf("%s %s: the compiled defaulting walk differs from Default:\n Default %v\n walk    %v", base.APIVersion, base.Kind, full, walked)
			continue
		}
		if !reflect.DeepEqual(full, m) {
			defaulted++
		}
		want := structurallisttype.ValidateListSetsAndMaps(nil, c.structural, full)
		var got []string
		if c.walks.listSetsMaps != nil {
			for _, e := range structurallisttype.ValidateListSetsAndMaps(nil, c.walks.listSetsMaps, short) {
				got = append(got, e.Error())
			}
		}
		var wantS []string
		for _, e := range want {
			wantS = append(wantS, e.Error())
		}
		if !sameSet(got, wantS) {
			t.Errorf("%s %s: list validation over the cut schema differs:\n full %q\n cut  %q", base.APIVersion, base.Kind, wantS, got)
		}
	}
	if compared < 500 || cut == 0 || defaulted < 100 {
		t.Errorf("compared %d objects, %d with a cut schema, %d defaulted: the test does not exercise the cut or the defaults", compared, cut, defaulted)
	}
}

// TestCutKeepsPropertyNames: where the additional properties are kept, a
// property with nothing to default below it stays a property (a shell), or
// defaulting would treat its value as an additional property.
func TestCutKeepsPropertyNames(t *testing.T) {
	s := &structuralschema.Structural{
		Generic:    structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{"a": {Generic: structuralschema.Generic{Type: "object"}}},
		AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: &structuralschema.Structural{
			Generic:    structuralschema.Generic{Type: "object"},
			Properties: map[string]structuralschema.Structural{"x": {Generic: structuralschema.Generic{Type: "string", Default: structuralschema.JSON{Object: "d"}}}},
		}},
	}
	full := map[string]any{"a": map[string]any{}, "b": map[string]any{}}
	short := runtime.DeepCopyJSON(full)
	walked := runtime.DeepCopyJSON(full)
	structuraldefaulting.Default(full, s)
	structuraldefaulting.Default(short, walksOf(s).defaults)
	if !reflect.DeepEqual(full, short) {
		t.Errorf("full %v, cut %v", full, short)
	}
	walksOf(s).defaulter.apply(walked)
	if !reflect.DeepEqual(full, walked) {
		t.Errorf("full %v, compiled walk %v", full, walked)
	}
	if full["b"].(map[string]any)["x"] != "d" {
		t.Errorf("the test schema defaults nothing: %v", full)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
		if seen[x] < 0 {
			return false
		}
	}
	return true
}
