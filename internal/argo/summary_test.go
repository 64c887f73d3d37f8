package argo

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestSummaryStandsForRender holds a released render's Summary to the
// render: EachOwned walks the same objects, in the same order, with the
// same keys, names and content hashes (app-shared-object reads nothing
// else of a released render).
func TestSummaryStandsForRender(t *testing.T) {
	app := yaml.MustParse(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  destination: {server: https://kubernetes.default.svc, namespace: shop}
  source: {repoURL: https://git.example.com/r.git, path: deploy/web}
`)
	resources, err := kio.FromBytes([]byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: 2}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: "名前-ü", namespace: other}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
  annotations: {config.kubernetes.io/local-config: "true"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: ""}
`))
	if err != nil {
		t.Fatal(err)
	}
	// A name of 300 bytes: its length takes two bytes packed.
	if err := resources[0].SetName(strings.Repeat("w", 300)); err != nil {
		t.Fatal(err)
	}
	walk := func(as AppSource) (out []Owned) {
		EachOwned([]AppSource{as}, func(o Owned) {
			o.hash, o.Obj = o.Hash(), nil
			out = append(out, o)
		})
		return out
	}
	whole := walk(AppSource{App: app, Index: -1, Path: "deploy/web", Resources: resources})
	sum := Summarise(resources)
	released := walk(AppSource{App: app, Index: -1, Path: "deploy/web", Summary: sum})
	if len(whole) != 4 || sum.Len() != 4 {
		t.Fatalf("walked %d objects of the render and %d of the summary (Len %d), want 4", len(whole), len(released), sum.Len())
	}
	if !reflect.DeepEqual(whole, released) {
		t.Errorf("the summary does not stand for the render:\nrender:  %+v\nsummary: %+v", whole, released)
	}
	if empty := Summarise(nil); empty.Len() != 0 {
		t.Errorf("an empty render's summary has %d objects", empty.Len())
	}
}
