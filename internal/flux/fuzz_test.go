package flux

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzRender feeds Flux Kustomizations (untrusted input from the checkout)
// to Render and Traced over the fleet checkout: an error or a render, never a panic,
// and never a read outside the checkout. Seeds: the fleet's Kustomizations.
func FuzzRender(f *testing.F) {
	f.Add(fleet["clusters/prod/apps.yaml"])
	f.Add("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: p, namespace: flux-system}\nspec: {path: ./apps/plain, postBuild: {substitute: {A: b}}}\n")
	f.Add("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: p, namespace: flux-system}\nspec: {path: ./apps/prod, components: [../../x], patches: [{patch: 'x'}]}\n")
	root := writeFleet(f)
	cm := objects(f, "clusters/prod/cluster-vars.yaml")
	f.Fuzz(func(t *testing.T, doc string) {
		ks, err := yaml.Parse(doc)
		if err != nil || ks.YNode().Kind != yaml.MappingNode {
			return
		}
		_, _ = Render(ks, root, cm)
		_, _, _ = Traced(ks, root, cm, 0) // the kustomization it generates, with buildMetadata added
	})
}
