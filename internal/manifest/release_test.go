package manifest_test

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// corpusObjects are the objects of every vendored corpus file that parses.
func corpusObjects(t *testing.T) []*yaml.RNode {
	t.Helper()
	var out []*yaml.RNode
	testutil.CorpusYAML(t, func(path string, data []byte) {
		objs, err := stream.Parse(data, path)
		if err == nil {
			out = append(out, objs...)
		}
	})
	if len(out) < 200 {
		t.Fatalf("%d corpus objects: the corpus is not read", len(out))
	}
	return out
}

// Unpack gives back the tree Pack packed: every field of every node,
// lines, columns and comments included.
func TestPackUnpack(t *testing.T) {
	for _, o := range corpusObjects(t) {
		p, ok := manifest.Pack(o)
		if !ok {
			t.Fatalf("%s/%s: not packed", o.GetKind(), o.GetName())
		}
		if got := manifest.Unpack(p); !reflect.DeepEqual(got.YNode(), o.YNode()) {
			t.Fatalf("%s/%s unpacked differs:\n%s\nwant\n%s", o.GetKind(), o.GetName(), got.MustString(), o.MustString())
		}
		// A tree holds 152 bytes a node and its strings; packed, a node
		// takes a few bytes beside its strings.
		if nodes, strs := count(o.YNode()); len(p)-strs > nodes*152/8 {
			t.Errorf("%s/%s: %d bytes packed for %d nodes and %d bytes of strings", o.GetKind(), o.GetName(), len(p), nodes, strs)
		}
	}
	alias := yaml.NewRNode(&yaml.Node{Kind: yaml.AliasNode, Value: "a", Alias: &yaml.Node{Kind: yaml.ScalarNode, Value: "x"}})
	if _, ok := manifest.Pack(alias); ok {
		t.Error("an alias packed: Unpack cannot give the pointer back")
	}
}

// Release keeps what names an object and nothing else; copies that print
// the same have equal content keys, copies that differ do not, the
// annotations readers add left out.
func TestReleaseAndContentKey(t *testing.T) {
	objs, err := stream.Parse([]byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
  labels: {app: web}
  annotations: {team: shop}
spec: {replicas: 2}
`), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := objs[0]
	same, _ := stream.Parse([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---\n"+o.MustString()), "b.yaml")
	other := o.Copy()
	if err := other.PipeE(yaml.SetField("spec", yaml.NewMapRNode(&map[string]string{"replicas": "3"}))); err != nil {
		t.Fatal(err)
	}
	if manifest.ContentKeyOf(o) != manifest.ContentKeyOf(same[1]) {
		t.Error("the same object read from another file at another index: keys differ")
	}
	if manifest.ContentKeyOf(o) == manifest.ContentKeyOf(other) {
		t.Error("a copy with other replicas: keys equal")
	}
	manifest.Release(o)
	got := o.MustString()
	for _, want := range []string{"apiVersion: apps/v1", "kind: Deployment", "name: web", "namespace: prod", "team: shop", "internal.config.kubernetes.io/path: a.yaml"} {
		if !strings.Contains(got, want) {
			t.Errorf("released object lost %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"spec", "replicas", "labels"} {
		if strings.Contains(got, gone) {
			t.Errorf("released object kept %q:\n%s", gone, got)
		}
	}
}

func count(n *yaml.Node) (nodes, strs int) {
	nodes, strs = 1, len(n.Value)+len(n.Anchor)+len(n.HeadComment)+len(n.LineComment)+len(n.FootComment)
	for _, k := range n.Content {
		kn, ks := count(k)
		nodes, strs = nodes+kn, strs+ks
	}
	return nodes, strs
}
