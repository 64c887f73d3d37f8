package testutil

import "testing"

// TestSays: a finding under its object is found only under that object's
// header, before the next header.
func TestSays(t *testing.T) {
	out := "== -k a: 2 error(s)\nDeployment/web (ns shop) [a/web.yaml]\n  ERROR [image-digest] spec.x: not pinned [line 3]\nService/web (ns shop)\n  ERROR [schema] spec.ports: bad\nFAIL: 2\n"
	for want, ok := range map[string]bool{
		"Deployment/web (ns shop)\n  ERROR [image-digest] spec.x": true,
		"Service/web (ns shop)\n  ERROR [schema]":                 true,
		"Deployment/web (ns shop)\n  ERROR [schema]":              false, // under the next object
		"Service/web (ns shop)\n  ERROR [image-digest]":           false,
		"Deployment/api (ns shop)\n  ERROR [image-digest]":        false,
		"FAIL: 2":      true,
		"PASS":         false,
		"== -k a: 2 e": true,
	} {
		if got := Says(out, want); got != ok {
			t.Errorf("Says(%q) = %v, want %v", want, got, ok)
		}
	}
}
