package plugin_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

func TestE2ESelftest(t *testing.T) {
	r := gate(t, "", "selftest", "-k", "examples/overlays/prod")
	if r.Code != 0 {
		t.Fatalf("selftest on the prod overlay: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"== -k examples/overlays/prod: the baseline passes", "render-empty", "replace a digest by :latest", "drop the digest, keep the tag", "move an image to another registry"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("selftest table lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "MISSED") || !strings.Contains(r.Stderr, "selftest: PASSED") {
		t.Errorf("a mutant passed, or no verdict line:\n%s%s", r.Stdout, r.Stderr)
	}
	// The overlay's own Gate (gate.yaml: allowedRegistries [ghcr.io]) is
	// used as check uses it: without it the registry mutant has nothing
	// to break and would read N/A.
	if row := rowOf(r.Stdout, "move an image to another registry"); !strings.Contains(row, "FAIL") {
		t.Errorf("the in-tree Gate's allowedRegistries was not applied: %q", row)
	}
}

// TestE2ESelftestRedBaseline: a render with findings of its own cannot
// prove anything. selftest says that it is the baseline, not a mutant,
// prints the baseline's findings, runs no mutant, and exits 1.
func TestE2ESelftestRedBaseline(t *testing.T) {
	r := gate(t, "", "selftest", "-k", "examples/overlays/prod-retag")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"== -k examples/overlays/prod-retag: the baseline does NOT pass; no mutant was run",
		"Deployment/worker (ns shop-prod)\n  ERROR [image-digest] spec.template.spec.containers[0].image",
		"image set by examples/overlays/prod-retag/kustomization.yaml `images:`",
	} {
		if !says(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "RULE ") || strings.Contains(r.Stderr, "let a mutant through") {
		t.Errorf("a red baseline must not read as a mutant table or a missed mutant:\n%s%s", r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "the baseline of -k examples/overlays/prod-retag does not pass (2 error(s), 0 warning(s)") {
		t.Errorf("stderr does not say the baseline failed:\n%s", r.Stderr)
	}
	// json carries the same: the baseline state and its findings.
	j := gate(t, "", "selftest", "-k", "examples/overlays/prod-retag", "-o", "json")
	var out struct {
		Inputs []struct {
			Input, Baseline string
			Findings        []struct{ Rule string } `json:"baselineFindings"`
			Mutants         []any
		}
	}
	if err := json.Unmarshal([]byte(j.Stdout), &out); err != nil || j.Code != 1 {
		t.Fatalf("json: exit %d, %v\n%s", j.Code, err, j.Stdout)
	}
	if len(out.Inputs) != 1 || out.Inputs[0].Baseline != "fail" || len(out.Inputs[0].Findings) != 2 || out.Inputs[0].Findings[0].Rule != "image-digest" || len(out.Inputs[0].Mutants) != 0 {
		t.Errorf("json inputs: %+v", out.Inputs)
	}
}

// TestE2ESelftestLabelsInputs: with two -k inputs each table says which
// input it is, and a red baseline on one does not hide the other's table.
func TestE2ESelftestLabelsInputs(t *testing.T) {
	r := gate(t, "", "selftest", "-k", "examples/overlays/prod", "-k", "examples/overlays/prod-retag")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1 (one baseline is red)\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	good := strings.Index(r.Stdout, "== -k examples/overlays/prod: the baseline passes")
	bad := strings.Index(r.Stdout, "== -k examples/overlays/prod-retag: the baseline does NOT pass")
	if good < 0 || bad < 0 {
		t.Fatalf("tables not labelled by input:\n%s", r.Stdout)
	}
	if table := r.Stdout[good:bad]; !strings.Contains(table, "replace a digest by :latest") || strings.Contains(table, "MISSED") {
		t.Errorf("the prod table:\n%s", table)
	}
	if strings.Contains(r.Stderr, "-k examples/overlays/prod:") || !strings.Contains(r.Stderr, "the baseline of -k examples/overlays/prod-retag does not pass") {
		t.Errorf("stderr must blame prod-retag's baseline only:\n%s", r.Stderr)
	}
	j := gate(t, "", "selftest", "-k", "examples/overlays/prod", "-k", "examples/overlays/staging", "-o", "json")
	var out struct {
		Inputs []struct{ Input, Baseline string }
		Rows   []struct{ Input, Rule string } `json:"mutants"`
	}
	if err := json.Unmarshal([]byte(j.Stdout), &out); err != nil {
		t.Fatalf("json: %v\n%s", err, j.Stdout)
	}
	if len(out.Inputs) != 2 || out.Inputs[0].Input != "-k examples/overlays/prod" || out.Inputs[1].Input != "-k examples/overlays/staging" || out.Inputs[1].Baseline != "fail" {
		t.Errorf("json inputs: %+v", out.Inputs)
	}
	for _, row := range out.Rows {
		if row.Input != "-k examples/overlays/prod" {
			t.Errorf("row %s labelled %q", row.Rule, row.Input)
		}
	}
}

// TestE2ESelftestCatchesAWeakenedGate proves selftest goes red when the
// gate would let an outage through: with image-digest set to warning, the
// :latest mutant is only warned about, so the gate would pass it — and
// stderr names the rule and the mutation, not the baseline.
func TestE2ESelftestCatchesAWeakenedGate(t *testing.T) {
	r := gate(t, "", "selftest", "-k", "examples/overlays/prod", "--rule", "image-digest=warning")
	if r.Code != 1 || !strings.Contains(r.Stdout, "WARN") {
		t.Fatalf("selftest with image-digest as a warning: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	want := `the gate let a mutant through on -k examples/overlays/prod: rule image-digest, mutation "replace a digest by :latest" got WARN`
	if !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "baseline") {
		t.Errorf("stderr does not name the mutant:\n%s", r.Stderr)
	}
}

// TestE2ESelftestUserConfig: selftest judges with --config as check does.
// A rule the config turns off is listed as OFF (not tried, not a failure);
// a config the baseline breaks makes the baseline red.
func TestE2ESelftestUserConfig(t *testing.T) {
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"off.yaml":   "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec:\n  rules: {image-digest: \"off\"}\n",
		"count.yaml": "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nspec:\n  render: {expectResources: 4}\n",
	})
	r := gate(t, "", "selftest", "-k", "examples/overlays/prod", "--config", filepath.Join(dir, "off.yaml"))
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if row := rowOf(r.Stdout, "image-digest "); !strings.Contains(row, "the configuration turns this rule off") || !strings.Contains(row, "OFF") {
		t.Errorf("image-digest row: %q\n%s", row, r.Stdout)
	}
	if strings.Contains(r.Stdout, "replace a digest by :latest") {
		t.Errorf("a mutant of a rule that is off was run:\n%s", r.Stdout)
	}
	c := gate(t, "", "selftest", "-k", "examples/overlays/prod", "--config", filepath.Join(dir, "count.yaml"))
	if c.Code != 1 || !strings.Contains(c.Stdout, "[render-count]") || !strings.Contains(c.Stderr, "the baseline of -k examples/overlays/prod does not pass") {
		t.Errorf("--config expectResources 4 on a 3-object render: exit %d\n%s%s", c.Code, c.Stdout, c.Stderr)
	}
}

// TestE2ESelftestArgoCDOperator: the ignoreDifferences mutant widens an
// argocd-operator ArgoCD resource, and the gate stops it.
func TestE2ESelftestArgoCDOperator(t *testing.T) {
	const input = `apiVersion: argoproj.io/v1beta1
kind: ArgoCD
metadata: {name: argocd, namespace: argocd}
spec:
  resourceIgnoreDifferences:
    all:
      jsonPointers: [/spec/replicas]
    resourceIdentifiers:
      - group: apps
        kind: Deployment
        customization:
          jsonPointers: [/spec/replicas]
`
	r := gate(t, input, "selftest", "-f", "-")
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if row := rowOf(r.Stdout, "widen an ignoreDifferences pointer to /spec"); !strings.Contains(row, "FAIL") {
		t.Errorf("the ArgoCD resource's mutant was not caught: %q\n%s", row, r.Stdout)
	}
	bad := gate(t, strings.Replace(input, "jsonPointers: [/spec/replicas]\n    resourceIdentifiers", "jsonPointers: [/metadata/labels]\n    resourceIdentifiers", 1), "check", "-f", "-")
	if bad.Code != 1 || !strings.Contains(bad.Stdout, "spec.resourceIgnoreDifferences.all.jsonPointers[0]") {
		t.Errorf("check on an ArgoCD resource hiding every label: exit %d\n%s%s", bad.Code, bad.Stdout, bad.Stderr)
	}
}

// rowOf returns the first line of out that contains s.
func rowOf(out, s string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}
