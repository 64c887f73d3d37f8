package config

import (
	"strings"
	"testing"
)

func TestSignaturesConfig(t *testing.T) {
	gate := func(sigs string) string {
		return "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: g}\nspec:\n  images:\n    signatures: " + sigs + "\n"
	}
	obj, err := Decode([]byte(gate(`{keys: [cosign.pub], identities: [{identity: ci@shop.example, issuerRegexp: "^https://token\\.actions\\."}], trustedRoot: trusted_root.json, attestations: ["https://slsa.dev/provenance/v1"]}`)))
	if err != nil {
		t.Fatal(err)
	}
	s := obj.Spec.Images.Signatures
	if !s.Enabled() || s.Keys[0] != "cosign.pub" || s.Identities[0].IssuerRegexp != `^https://token\.actions\.` || s.TrustedRoot != "trusted_root.json" || s.Attestations[0] != "https://slsa.dev/provenance/v1" {
		t.Fatalf("decoded %+v", s)
	}
	for _, c := range []struct{ sigs, want string }{
		{`{keys: [cosign.pub], keyz: [x]}`, "spec.images.signatures.keyz"},
		{`{identities: [{identity: a, issuer: b, issur: c}], trustedRoot: r.json}`, "issur"},
		{`{identities: [{identity: a, issuer: b}]}`, "trustedRoot: required"},
		{`{identities: [{identity: a}], trustedRoot: r.json}`, "issuer or issuerRegexp is required"},
		{`{identities: [{identityRegexp: "(", issuer: b}], trustedRoot: r.json}`, "identityRegexp"},
		{`{keys: [""]}`, "empty path"},
		{`{attestations: [x]}`, "no allowed signer"},
	} {
		if _, err := Decode([]byte(gate(c.sigs))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error naming %q, got %v", c.sigs, c.want, err)
		}
	}
	// Only the trusted config's signers count: an in-tree Gate must not
	// allow its own.
	trusted, inTree := *Default(), *Default()
	trusted.Images.Signatures = &Signatures{Keys: []string{"trusted.pub"}}
	inTree.Images.Signatures = &Signatures{Keys: []string{"mallory.pub"}}
	if got := Tighten(trusted, inTree, nil); len(got.Images.Signatures.Keys) != 1 || got.Images.Signatures.Keys[0] != "trusted.pub" {
		t.Errorf("in-tree signers taken: %+v", got.Images.Signatures)
	}
}
