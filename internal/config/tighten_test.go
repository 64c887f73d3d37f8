package config

import (
	"slices"
	"strings"
	"testing"
)

var defaults = map[string]string{"image-digest": "error", "rollout-single-writer": "warning", "image-registry": "error"}

func decodeSpec(t *testing.T, spec string) Spec {
	t.Helper()
	obj, err := Decode([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec: " + spec + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return obj.Spec
}

// A pull request's own Gate cannot switch a check off: `rules:
// {image-digest: "off"}` in the overlay used to pass nginx:latest.
func TestInTreeConfigOnlyTightens(t *testing.T) {
	trusted := *Default()
	inTree := decodeSpec(t, `{images: {digest: "off", allowedRegistries: [ghcr.io]}, render: {minResources: 0, expectResources: 4}, rules: {image-digest: "off", rollout-single-writer: error}}`)
	got := Tighten(trusted, inTree, defaults)
	if got.Images.Digest != DigestRequire {
		t.Errorf("digest = %q, want require (off would loosen)", got.Images.Digest)
	}
	if _, lowered := got.Rules["image-digest"]; lowered {
		t.Errorf("image-digest lowered to %q", got.Rules["image-digest"])
	}
	if got.Rules["rollout-single-writer"] != "error" {
		t.Errorf("rollout-single-writer = %q, want raised to error", got.Rules["rollout-single-writer"])
	}
	if !slices.Equal(got.Images.AllowedRegistries, []string{"ghcr.io"}) {
		t.Errorf("allowedRegistries = %v, want narrowed to ghcr.io", got.Images.AllowedRegistries)
	}
	if *got.Render.MinResources != 1 || got.Render.ExpectResources == nil || *got.Render.ExpectResources != 4 {
		t.Errorf("render = %+v, want minResources kept at 1 and expectResources 4 added", got.Render)
	}

	verify := decodeSpec(t, `{images: {digest: verify}}`)
	if got := Tighten(trusted, verify, defaults); got.Images.Digest != DigestVerify {
		t.Errorf("digest verify (stricter) not taken: %q", got.Images.Digest)
	}
	wide := decodeSpec(t, `{images: {allowedRegistries: [ghcr.io, evil.io]}}`)
	narrow := decodeSpec(t, `{images: {allowedRegistries: [ghcr.io]}}`)
	if got := Tighten(narrow, wide, defaults); !slices.Equal(got.Images.AllowedRegistries, []string{"ghcr.io"}) {
		t.Errorf("allowedRegistries widened to %v", got.Images.AllowedRegistries)
	}
	// Registry settings come from the trusted config only: an in-tree
	// mirror would let a pull request choose the digests pinned and
	// verified.
	redirect := decodeSpec(t, `{images: {mirrors: {ghcr.io: evil.io}, insecureRegistries: [evil.io], platform: linux/arm64}}`)
	if got := Tighten(trusted, redirect, defaults); len(got.Images.Mirrors) != 0 || len(got.Images.InsecureRegistries) != 0 || got.Images.Platform != "" {
		t.Errorf("in-tree registry settings taken: %+v", got.Images)
	}
	disjoint := decodeSpec(t, `{images: {allowedRegistries: [evil.io]}}`)
	if got := Tighten(narrow, disjoint, defaults); !slices.Equal(got.Images.AllowedRegistries, []string{"ghcr.io"}) {
		t.Errorf("disjoint lists gave %v (empty would mean any)", got.Images.AllowedRegistries)
	}
}

func TestTrustedConfigMayAllowLoosening(t *testing.T) {
	trusted := decodeSpec(t, `{allowInTreeLoosening: true}`)
	inTree := decodeSpec(t, `{rules: {image-digest: "off"}}`)
	got := Tighten(trusted, inTree, defaults)
	if got.Rules["image-digest"] != "off" {
		t.Errorf("with allowInTreeLoosening the in-tree object decides; got %v", got.Rules)
	}
	self := decodeSpec(t, `{allowInTreeLoosening: true, rules: {image-digest: "off"}}`)
	if got := Tighten(*Default(), self, defaults); got.Rules["image-digest"] == "off" || got.AllowInTreeLoosening {
		t.Errorf("an in-tree object allowed its own loosening: %+v", got)
	}
}

// render.remote: an in-tree deny tightens; an in-tree allow does not
// lift the caller's deny; a value other than allow or deny is refused.
func TestRenderRemote(t *testing.T) {
	deny := decodeSpec(t, `{render: {remote: deny}}`)
	allow := decodeSpec(t, `{render: {remote: allow}}`)
	if got := Tighten(*Default(), deny, defaults); !got.Render.RemoteDenied() {
		t.Errorf("in-tree deny not taken: %+v", got.Render)
	}
	if got := Tighten(deny, allow, defaults); !got.Render.RemoteDenied() {
		t.Errorf("in-tree allow lifted the trusted deny: %+v", got.Render)
	}
	if Default().Render.RemoteDenied() {
		t.Error("remote resources are denied by default; the default is allow, as kustomize")
	}
	if _, err := Decode([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec: {render: {remote: never}}\n")); err == nil || !strings.Contains(err.Error(), `spec.render.remote: "never" is not allow or deny`) {
		t.Errorf("remote: never: err = %v", err)
	}
}
