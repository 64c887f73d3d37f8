package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// TestSourceFileAtLines: a finding about an object read from a file (-f)
// names the line of its field in that file, also for documents far into a
// stream the reader parses in chunks; what the object's nodes cannot place
// in the file names the file alone.
func TestSourceFileAtLines(t *testing.T) {
	const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web%d
  annotations:
    kubectl-gate.dev/waive: image-digest
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx:latest
`
	// Enough documents that the reader cuts the stream in chunks.
	var b strings.Builder
	const docs = 3000
	for i := range docs {
		fmt.Fprintf(&b, "---\n"+deploy, i)
	}
	objs, err := stream.Parse([]byte(b.String()), "deploy.yaml")
	if err != nil || len(objs) != docs {
		t.Fatalf("parsed %d objects: %v", len(objs), err)
	}
	per := strings.Count(deploy, "\n") + 1 // and its "---"
	for _, i := range []int{0, 1, docs / 2, docs - 1} {
		first := i*per + 2 // its apiVersion line
		for path, want := range map[string]int{
			"":                                             first,
			"spec.template.spec.containers[0].image":       first + 11,
			"spec.template.spec.containers[0]":             first + 10,
			"spec.template.spec.containers[3].image":       first + 9, // no such item: the list
			"spec.template.spec.securityContext":           first + 8, // not written: its parent
			"metadata.annotations.kubectl-gate.dev/waive":  first + 5, // a key with dots, after a dot
			"metadata.annotations[kubectl-gate.dev/waive]": first + 5,
			"spec.strategy.canary":                         first + 6,
		} {
			f := manifest.SourceFileAt(objs[i], path)
			if f == nil || f.Path != "deploy.yaml" || f.Index != i || f.Line != want {
				t.Errorf("document %d, %q: got %+v, want deploy.yaml index %d line %d", i, path, f, i, want)
			}
		}
		if got := manifest.Finding("image-digest", finding.SeverityError, objs[i], "spec.template.spec.containers[0].image", "nginx:latest", "x").File; got == nil || got.Line != first+11 {
			t.Errorf("document %d: manifest.Finding places the image at %+v, want line %d", i, got, first+11)
		}
	}

	// Objects whose lines are not the file's: the file, no line.
	for name, doc := range map[string]string{
		// an ApplicationSet's generated Application names its file only
		"generated": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a\n  annotations:\n    internal.config.kubernetes.io/path: apps.yaml\n",
		// kustomize's render: the origin names the file, the lines are the render's
		"rendered": "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n    config.kubernetes.io/origin: |\n      path: apps.yaml\n    internal.config.kubernetes.io/path: apps.yaml\n    internal.config.kubernetes.io/index: '0'\n",
		// a Helm template
		"helm": "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n    " + manifest.AnnoHelmSource + ": templates/svc.yaml\n    internal.config.kubernetes.io/path: apps.yaml\n    internal.config.kubernetes.io/index: '0'\n",
	} {
		n, err := yaml.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		if f := manifest.SourceFileAt(n, "metadata.name"); f == nil || f.Line != 0 {
			t.Errorf("%s: got %+v, want a file and no line", name, f)
		}
	}
	// A List's items and a ResourceList's items start past column 1.
	list, err := stream.Parse([]byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n"), "list.yaml")
	if err != nil || len(list) != 1 {
		t.Fatalf("parsed %d objects: %v", len(list), err)
	}
	if f := manifest.SourceFileAt(list[0], "metadata.name"); f == nil || f.Path != "list.yaml" || f.Line != 0 {
		t.Errorf("a List's item: got %+v, want list.yaml and no line", f)
	}
}
