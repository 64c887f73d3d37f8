package manifest_test

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
)

// TestFileAnnotationsIsKioutil: FileAnnotations reads what
// kioutil.GetFileAnnotations reads, on well-formed annotations and on
// repeated keys, nulls, aliases, values that are maps, annotations that are
// not a map.
func TestFileAnnotationsIsKioutil(t *testing.T) {
	for _, tc := range []struct {
		name, metadata string
	}{
		{name: "current", metadata: `{name: a, annotations: {internal.config.kubernetes.io/path: a.yaml, internal.config.kubernetes.io/index: "3"}}`},
		{name: "legacy", metadata: `{name: a, annotations: {config.kubernetes.io/path: old.yaml, config.kubernetes.io/index: "2"}}`},
		{name: "both", metadata: `{name: a, annotations: {config.kubernetes.io/path: old.yaml, internal.config.kubernetes.io/path: new.yaml, config.kubernetes.io/index: "2", internal.config.kubernetes.io/index: "5"}}`},
		{name: "current empty", metadata: `{name: a, annotations: {config.kubernetes.io/path: old.yaml, internal.config.kubernetes.io/path: ""}}`},
		{name: "path only", metadata: `{name: a, annotations: {internal.config.kubernetes.io/path: a.yaml}}`},
		{name: "index as a number", metadata: `{name: a, annotations: {internal.config.kubernetes.io/path: a.yaml, internal.config.kubernetes.io/index: 7}}`},
		{name: "none", metadata: `{name: a, annotations: {x: y}}`},
		{name: "no annotations", metadata: `{name: a}`},
		{name: "null annotations", metadata: `{name: a, annotations: null}`},
		{name: "annotations a string", metadata: `{name: a, annotations: "internal.config.kubernetes.io/path"}`},
		{name: "no metadata", metadata: ``},
		{name: "repeated key", metadata: `{name: a, annotations: {internal.config.kubernetes.io/path: a.yaml, internal.config.kubernetes.io/path: b.yaml}}`},
		{name: "labels a list", metadata: `{name: a, labels: [x], annotations: {internal.config.kubernetes.io/path: a.yaml, internal.config.kubernetes.io/index: "1"}}`},
		{name: "annotations a list", metadata: `{name: a, annotations: [internal.config.kubernetes.io/path, a.yaml]}`},
		{name: "index a map", metadata: `{name: a, annotations: {internal.config.kubernetes.io/path: a.yaml, internal.config.kubernetes.io/index: {a: b}}}`},
		{name: "path null", metadata: `{name: a, annotations: {internal.config.kubernetes.io/path: ~, config.kubernetes.io/path: old.yaml}}`},
		{name: "path null word", metadata: `{name: a, annotations: {internal.config.kubernetes.io/path: null}}`},
		{name: "path tagged null", metadata: `{name: a, annotations: {internal.config.kubernetes.io/path: !!null x}}`},
		{name: "index null, legacy set", metadata: `{name: a, annotations: {internal.config.kubernetes.io/path: a.yaml, internal.config.kubernetes.io/index: ~, config.kubernetes.io/index: '4'}}`},
		{name: "path an alias", metadata: `{name: &p a, annotations: {internal.config.kubernetes.io/path: *p}}`},
		{name: "other annotation a map", metadata: `{name: a, annotations: {x: {a: b}, internal.config.kubernetes.io/path: a.yaml}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: v1\nkind: ConfigMap\n"
			if tc.metadata != "" {
				doc += "metadata: " + tc.metadata + "\n"
			}
			n, err := yaml.Parse(doc)
			if err != nil {
				t.Fatal(err)
			}
			path, index := manifest.FileAnnotations(n)
			wantPath, wantIndex, _ := kioutil.GetFileAnnotations(n)
			if path != wantPath || index != wantIndex {
				t.Errorf("FileAnnotations = %q, %q; want %q, %q", path, index, wantPath, wantIndex)
			}
		})
	}
}
