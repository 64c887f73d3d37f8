package images

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Collect walks a large render on every core (inChunks); what it returns
// is what one walk in order gives: every container of every object skip
// keeps, in object order, and a panic reaches the caller.
func TestCollectLargeRenderInOrder(t *testing.T) {
	var objs []*yaml.RNode
	for i := range 3 * chunkFrom {
		var doc string
		switch i % 4 {
		case 0:
			doc = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i)
		default:
			doc = fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d%d}\nspec:\n  template:\n    spec:\n      initContainers: [{name: init, image: 'reg.example/init:%d'}]\n      containers: [{name: app, image: 'reg.example/app:%d'}, {name: side, image: reg.example/side}]\n", i, i%3, i)
		}
		objs = append(objs, yaml.MustParse(doc))
	}
	skip := func(o *yaml.RNode) bool { return strings.HasSuffix(o.GetName(), "7") }
	var want []string
	for _, o := range objs {
		if skip(o) {
			continue
		}
		for _, c := range Find(o, nil) {
			want = append(want, o.GetName()+" "+c.Image)
		}
	}
	got := Collect(objs, nil, skip)
	if len(got) != len(want) || len(want) < 3*chunkFrom {
		t.Fatalf("%d images, want %d", len(got), len(want))
	}
	for i, im := range got {
		if s := im.Obj.GetName() + " " + im.Container.Image; s != want[i] || !im.Valid {
			t.Fatalf("image %d is %q (valid %v), want %q", i, s, im.Valid, want[i])
		}
	}
	defer func() {
		if p := recover(); p != "skip d301" {
			t.Errorf("recovered %v, want the panic of skip", p)
		}
	}()
	Collect(objs, nil, func(o *yaml.RNode) bool {
		if o.GetName() == "d301" {
			panic("skip d301")
		}
		return false
	})
}
