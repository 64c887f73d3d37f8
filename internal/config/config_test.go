package config

import (
	"strings"
	"testing"
)

func TestDecodeDefaults(t *testing.T) {
	obj, err := Decode([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata:\n  name: prod\n  annotations: {config.kubernetes.io/function: 'exec: {path: x}'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if obj.Spec.Images.Digest != DigestRequire || *obj.Spec.Render.MinResources != 1 || obj.Spec.Render.ExpectResources != nil {
		t.Errorf("an empty spec is not the strict default: %+v", obj.Spec)
	}
}

func TestDecodeListPodSpecPath(t *testing.T) {
	doc := "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec:\n  images: {podSpecPaths: [{kind: Experiment, path: \"spec.templates[].template.spec\"}]}\n"
	if _, err := Decode([]byte(doc)); err != nil {
		t.Fatalf("list syntax refused: %v", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	head := "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\n"
	cases := map[string]struct{ doc, says string }{
		"unknown field":     {head + "spec:\n  images:\n    digests: off\n", `unknown field "spec.images.digests"`},
		"unknown top field": {head + "sepc: {}\n", `unknown field "sepc"`},
		"unknown rule":      {head + "spec:\n  rules: {image-digset: off}\n", "spec.rules.image-digset: unknown rule id"},
		"bad severity":      {head + "spec:\n  rules: {image-digest: fatal}\n", `spec.rules.image-digest: "fatal"`},
		"bad digest mode":   {head + "spec:\n  images: {digest: maybe}\n", `spec.images.digest: "maybe"`},
		"negative min":      {head + "spec:\n  render: {minResources: -1}\n", "spec.render.minResources"},
		"wrong type":        {head + "spec:\n  render: {minResources: many}\n", "minResources"},
		"wrong kind":        {"apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gates\n", `kind: "Gates"`},
		"wrong apiVersion":  {"apiVersion: kubectl-gate.dev/v1\nkind: Gate\n", "apiVersion"},
		"bad platform":      {head + "spec:\n  images: {platform: amd64}\n", "spec.images.platform"},
		"not yaml":          {"kind: [", "decoding"},
		"bad failOn":        {head + "spec:\n  failOn: info\n", `spec.failOn: "info"`},
		"bad pod spec path": {head + "spec:\n  images: {podSpecPaths: [{kind: X, path: \"spec.a[0].b\"}]}\n", "spec.images.podSpecPaths[0].path"},
		"empty policy path": {head + "spec:\n  policies: [\"\"]\n", "spec.policies[0]: empty path"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(c.doc))
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err = %v, want one saying %q", err, c.says)
			}
		})
	}
}

// TestDecodeVerdictFields: the fields that change a verdict the way plugin
// flags do (--fail-on, --require-pinned-by) decode, so the KRM function can
// honour them.
func TestDecodeVerdictFields(t *testing.T) {
	obj, err := Decode([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec:\n  failOn: warning\n  images: {requirePinnedBy: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !obj.Spec.FailOnWarning() || !obj.Spec.Images.RequirePinnedBy {
		t.Errorf("spec = %+v", obj.Spec)
	}
	if Default().FailOnWarning() {
		t.Error("the default fails on warnings")
	}
}
