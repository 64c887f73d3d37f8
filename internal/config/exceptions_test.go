package config

import (
	"strings"
	"testing"
)

const gateHead = "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec:\n"

func TestExceptionsRequireEveryField(t *testing.T) {
	full := "  - {rules: [image-digest], match: {name: web}, reason: r, owner: team-a, expires: 2027-01-01}\n"
	if _, err := Decode([]byte(gateHead + "  exceptions:\n" + full)); err != nil {
		t.Fatalf("a complete entry is refused: %v", err)
	}
	for drop, says := range map[string]string{
		"rules: [image-digest], ": "spec.exceptions[1] (owner team-a): rules required",
		"match: {name: web}, ":    "spec.exceptions[1] (owner team-a): match (one of kind, namespace, name, app) required",
		"reason: r, ":             "spec.exceptions[1] (owner team-a): reason required",
		"owner: team-a, ":         "spec.exceptions[1]: owner required",
		", expires: 2027-01-01":   "spec.exceptions[1] (owner team-a): expires required",
	} {
		doc := gateHead + "  exceptions:\n" + full + strings.Replace(full, drop, "", 1)
		_, err := Decode([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("without %q: %v, want %q", drop, err, says)
		}
	}
	for entry, says := range map[string]string{
		"  - {rules: [image-digset], match: {name: web}, reason: r, owner: o, expires: 2027-01-01}\n": `unknown rule id "image-digset"`,
		"  - {rules: [image-digest], match: {name: web}, reason: r, owner: o, expires: 2027/01/01}\n": `expires: "2027/01/01" is not YYYY-MM-DD`,
		"  - {rules: [image-digest], match: {nmae: web}, reason: r, owner: o, expires: 2027-01-01}\n": `unknown field "spec.exceptions[0].match.nmae"`,
	} {
		if _, err := Decode([]byte(gateHead + "  exceptions:\n" + entry)); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want %q", entry, err, says)
		}
	}
}

func TestRuleLongForm(t *testing.T) {
	obj, err := Decode([]byte(gateHead + "  rules:\n    image-digest: {severity: error, waivable: false}\n    image-registry: warning\n    schema: {waivable: false}\n    policy: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := obj.Spec
	if s.Rules["image-digest"] != "error" || s.Rules["image-registry"] != "warning" || s.Rules["policy"] != "off" {
		t.Errorf("severities: %v", s.Rules)
	}
	if _, ok := s.Rules["schema"]; ok {
		t.Errorf("an entry without severity set one: %v", s.Rules)
	}
	if s.Waivable("image-digest") || s.Waivable("schema") || !s.Waivable("image-registry") {
		t.Errorf("unwaivable: %v", s.Unwaivable)
	}
	for doc, says := range map[string]string{
		"  rules:\n    image-digest: {severity: error, waiveable: false}\n": `unknown field "spec.rules.image-digest.waiveable"`,
		"  rules:\n    image-digest: {waivable: maybe}\n":                   `spec.rules.image-digest.waivable: "maybe"`,
		"  rules:\n    image-digset: {waivable: false}\n":                   "spec.rules.image-digset: unknown rule id",
		"  rules:\n    image-digest: {severity: fatal}\n":                   `spec.rules.image-digest: "fatal"`,
	} {
		if _, err := Decode([]byte(gateHead + doc)); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want %q", doc, err, says)
		}
	}
}

func TestTightenKeepsWaiversTrusted(t *testing.T) {
	trusted := Default()
	trusted.Exceptions = []Exception{{Rules: []string{"image-digest"}, Match: ExceptionMatch{Name: "web"}, Reason: "r", Owner: "o", Expires: "2027-01-01"}}
	inTree := Default()
	inTree.Exceptions = []Exception{{Rules: []string{"schema"}, Match: ExceptionMatch{Name: "x"}, Reason: "r", Owner: "o", Expires: "2027-01-01"}}
	inTree.ExceptionsFromAnnotations = true
	inTree.Unwaivable = []string{"schema"}
	for _, loosen := range []bool{false, true} {
		trusted.AllowInTreeLoosening = loosen
		out := Tighten(*trusted, *inTree, nil)
		if len(out.Exceptions) != 1 || out.Exceptions[0].Rules[0] != "image-digest" || out.ExceptionsFromAnnotations {
			t.Errorf("loosening=%v: the tree granted waivers: %+v", loosen, out)
		}
		if out.Waivable("schema") {
			t.Errorf("loosening=%v: the tree could not make schema unwaivable", loosen)
		}
	}
}
