package manifest_test

import (
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const objects = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
  annotations:
    config.kubernetes.io/origin: |
      path: base/web.yaml
    alpha.config.kubernetes.io/transformations: |
      - configuredIn: overlays/prod/kustomization.yaml
        configuredBy: {apiVersion: builtin, kind: ImageTagTransformer}
      - configuredIn: overlays/prod/kustomization.yaml
        configuredBy: {apiVersion: builtin, kind: NamespaceTransformer}
    internal.kubectl-gate.dev/image-sources: '{"nginx": {"file": "overlays/prod/kustomization.yaml", "line": 7}}'
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: values
  annotations: {config.kubernetes.io/local-config: "true"}
---
apiVersion: kubectl-gate.dev/v1alpha1
kind: Gate
metadata: {name: gate}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod, labels: {second: "true"}}
`

func TestFacts(t *testing.T) {
	rs, err := (&kio.ByteReader{Reader: strings.NewReader(objects), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	if manifest.Count(rs) != 3 || !manifest.IsLocalConfig(rs[1]) || !manifest.IsLocalConfig(rs[2]) || manifest.IsLocalConfig(rs[0]) {
		t.Errorf("local config / count wrong: %d", manifest.Count(rs))
	}
	if f := manifest.SourceFile(rs[0]); f == nil || f.Path != "base/web.yaml" {
		t.Errorf("SourceFile = %+v", f)
	}
	if got := manifest.TransformersOf(rs[0], "ImageTagTransformer"); len(got) != 1 || got[0] != "overlays/prod/kustomization.yaml" {
		t.Errorf("TransformersOf = %v", got)
	}
	if got := manifest.ImageSetBy(rs[0], "nginx"); got != (manifest.ImageSource{File: "overlays/prod/kustomization.yaml", Line: 7}) || manifest.ImageSetBy(rs[0], "redis").File != "" {
		t.Errorf("ImageSetBy = %+v", got)
	}
	ix := manifest.NewIndex(rs)
	if s := ix.Get("Service", "prod", "web"); s == nil || s.GetLabels()["second"] != "true" {
		t.Error("Index.Get: the later duplicate must win, as in a render")
	}
	if len(ix.Kind("Service")) != 2 || ix.Get("Service", "", "web") != nil {
		t.Error("Index.Kind / namespace")
	}
	f := manifest.Finding("image-digest", "error", rs[0], "spec.x", "v", "image %s", "nginx")
	if f.ResourceRef.String() != "Deployment/web (ns prod)" || f.Field.Path != "spec.x" || f.File.Path != "base/web.yaml" || f.Message != "image nginx" {
		t.Errorf("Finding = %+v", f)
	}
}

func TestSampleAndPlural(t *testing.T) {
	var objs []*yaml.RNode
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		objs = append(objs, yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+n+"}\n"))
	}
	if got := manifest.Sample(objs); got != "ConfigMap/a, ConfigMap/b, ConfigMap/c, and 2 more" {
		t.Errorf("Sample = %q", got)
	}
	if got := manifest.Sample(objs[:1]); got != "ConfigMap/a" {
		t.Errorf("Sample of one = %q", got)
	}
	if manifest.Plural(1, "object") != "1 object" || manifest.Plural(3, "object") != "3 objects" {
		t.Errorf("Plural: %q %q", manifest.Plural(1, "object"), manifest.Plural(3, "object"))
	}
}
