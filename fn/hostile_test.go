package fn

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The function reads its ResourceList as kubectl reads a stream: an image
// given by an alias or a merge key is seen, a duplicated key and a
// ResourceList without items are no verdict.
func TestRunReadsLikeKubectl(t *testing.T) {
	const head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
	cases := []struct {
		name, in string
		fails    bool
		want     string // in stdout or stderr
	}{
		{"alias image is checked", head + `items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p, annotations: {x: &img "nginx:latest"}}
  spec: {containers: [{name: c, image: *img}]}
`, true, "image-digest"},
		{"merge key image is checked", head + `items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p}
  spec:
    containers:
    - <<: {image: "nginx:latest"}
      name: c
`, true, "image-digest"},
		{"alias across items", head + `items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {i: &img "nginx:latest"}}
- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: *img}]}}
`, true, "image-digest"},
		{"duplicate key", head + `items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p}
  spec:
    containers:
    - name: c
      image: nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000
      image: nginx:latest
`, true, `key "image" already defined`},
		{"no items", head + "functionConfig: {apiVersion: kubectl-gate.dev/v1alpha1, kind: Gate, spec: {}}\n", true, "no items list"},
		{"items is a map", head + "items: {a: 1}\n", true, "no items list"},
		{"two documents", head + "items: []\n---\n" + head + "items: []\n", true, "more than one document"},
		{"bare list", "- a\n", true, "not a ResourceList"},
		{"pinned image passes", head + `items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p}
  spec: {containers: [{name: c, image: &i "nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000"}, {name: d, image: *i}]}
`, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := Run(context.Background(), strings.NewReader(c.in), &out, &errb, "test")
			if (err != nil) != c.fails {
				t.Fatalf("err = %v, want failure %v\nstdout: %s\nstderr: %s", err, c.fails, out.String(), errb.String())
			}
			if !strings.Contains(out.String()+errb.String(), c.want) {
				t.Errorf("output should hold %q:\nstdout: %s\nstderr: %s", c.want, out.String(), errb.String())
			}
		})
	}
}

// An item's lines are the ResourceList's, not those of the file its path
// annotation names: a JSON ResourceList can put an item at column 1 with
// the reader's path and index annotations, and its findings must not name
// a line of that file.
func TestItemLinesAreNotTheFiles(t *testing.T) {
	in := `{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "p", "annotations": {"internal.config.kubernetes.io/path": "deploy.yaml", "internal.config.kubernetes.io/index": "0"}},
 "spec": {"containers": [{"name": "c", "image": "nginx:latest"}]}}
]}
`
	var out, errb bytes.Buffer
	if err := Run(context.Background(), strings.NewReader(in), &out, &errb, "test"); err == nil {
		t.Fatalf("an unpinned image passed:\n%s", out.String())
	}
	got := out.String() + errb.String()
	if !strings.Contains(got, "image-digest") || !strings.Contains(got, "deploy.yaml") {
		t.Fatalf("no image-digest finding naming deploy.yaml:\n%s", got)
	}
	if strings.Contains(got, "deploy.yaml:") || strings.Contains(got, "line: 4") {
		t.Errorf("a finding names a line of deploy.yaml it read from the ResourceList:\n%s", got)
	}
}
