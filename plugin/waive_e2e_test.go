package plugin_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// deployment is a realistic workload; image without a digest fires
// image-digest.
func waiveDeployment(name, image, annotations string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  namespace: shop
` + annotations + `spec:
  replicas: 2
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
      containers:
      - name: ` + name + `
        image: ` + image + `
        ports: [{containerPort: 8080}]
`
}

func gateConfig(spec string) string {
	return "apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: ci}\nspec:\n" + spec
}

const legacyException = `  exceptions:
  - rules: [image-digest]
    match: {kind: Deployment, namespace: shop, name: legacy}
    reason: vendor publishes tags only (OPS-12)
    owner: team-shop
    expires: %s
`

func TestE2EExceptions(t *testing.T) {
	dir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
		"kustomization.yaml": "resources: [web.yaml, legacy.yaml]\n",
		"web.yaml":           waiveDeployment("web", "ghcr.io/shop/web:1.4@"+pinnedDigest, ""),
		"legacy.yaml":        waiveDeployment("legacy", "ghcr.io/shop/legacy:3.1", ""),
	})
	cfg := func(spec string) string {
		p := filepath.Join(t.TempDir(), "gate.yaml")
		if err := os.WriteFile(p, []byte(gateConfig(spec)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	valid := cfg(strings.Replace(legacyException, "%s", "2999-12-31", 1))

	t.Run("waived in every format", func(t *testing.T) {
		text := gate(t, "", "check", "-k", dir, "--config", valid)
		if text.Code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", text.Code, text.Stdout, text.Stderr)
		}
		for _, s := range []string{"waived:\n  ERROR [image-digest] Deployment/legacy (ns shop)", "owner team-shop; expires 2999-12-31; reason: vendor publishes tags only (OPS-12)", "PASS: 2 resource(s), 0 error(s), 0 warning(s), 1 waived"} {
			if !strings.Contains(text.Stdout, s) {
				t.Errorf("text lacks %q:\n%s", s, text.Stdout)
			}
		}
		js := gate(t, "", "check", "-k", dir, "--config", valid, "-o", "json")
		var doc struct {
			Results []struct {
				Rule       string
				Suppressed *struct{ Kind, Reason, Owner, Expires, Source string }
			}
			Summary struct{ Errors, Waived int }
		}
		if err := json.Unmarshal([]byte(js.Stdout), &doc); err != nil {
			t.Fatalf("json: %v\n%s", err, js.Stdout)
		}
		if len(doc.Results) != 1 || doc.Results[0].Suppressed == nil || doc.Results[0].Suppressed.Owner != "team-shop" ||
			!strings.HasSuffix(doc.Results[0].Suppressed.Source, "spec.exceptions[0]") || doc.Summary.Waived != 1 || doc.Summary.Errors != 0 {
			t.Errorf("json: %s", js.Stdout)
		}
		sarif := gate(t, "", "check", "-k", dir, "--config", valid, "-o", "sarif")
		if !strings.Contains(sarif.Stdout, `"suppressions"`) || !strings.Contains(sarif.Stdout, `"justification": "waived by --config`) {
			t.Errorf("sarif has no suppression with a justification:\n%s", sarif.Stdout)
		}
		junit := gate(t, "", "check", "-k", dir, "--config", valid, "-o", "junit")
		if !strings.Contains(junit.Stdout, `<testcase name="image-digest Deployment/legacy (ns shop) (suppressed)" classname="image-digest">`) || !strings.Contains(junit.Stdout, "<skipped message=") {
			t.Errorf("junit has no skipped case:\n%s", junit.Stdout)
		}
	})

	cases := []struct {
		name, spec string
		code       int
		says       []string
	}{
		{"expired is red", strings.Replace(legacyException, "%s", "2001-02-03", 1), 1,
			[]string{"ERROR [exception-expired] spec.exceptions[0]: spec.exceptions[0] (owner team-shop) of image-digest expired on 2001-02-03", "Deployment/legacy (ns shop)\n  ERROR [image-digest]"}},
		{"unused warns", strings.Replace(strings.Replace(legacyException, "%s", "2999-12-31", 1), "name: legacy", "name: gone", 1), 1,
			[]string{"WARNING [exception-unused] spec.exceptions[0]: spec.exceptions[0] (owner team-shop) of image-digest waived nothing in this run"}},
		{"unwaivable rule ignores it", "  rules:\n    image-digest: {severity: error, waivable: false}\n" + strings.Replace(legacyException, "%s", "2999-12-31", 1), 1,
			[]string{"WARNING [exception-ignored] spec.exceptions[0] (owner team-shop): spec.exceptions[0] (owner team-shop) matches image-digest on Deployment/legacy (ns shop), which is not waivable: the finding stands", "Deployment/legacy (ns shop)\n  ERROR [image-digest]"}},
		{"a missing field is a usage error", strings.Replace(strings.Replace(legacyException, "%s", "2999-12-31", 1), "    owner: team-shop\n", "", 1), 2,
			[]string{"spec.exceptions[0]: owner required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := gate(t, "", "check", "-k", dir, "--config", cfg(c.spec))
			if r.Code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.Code, c.code, r.Stdout, r.Stderr)
			}
			for _, s := range c.says {
				if !says(r.Stdout+r.Stderr, s) {
					t.Errorf("output lacks %q:\n%s%s", s, r.Stdout, r.Stderr)
				}
			}
		})
	}

	t.Run("annotations count only when the trusted config says so", func(t *testing.T) {
		ann := "  annotations:\n    kubectl-gate.dev/waive: \"image-digest expires=2999-12-31 owner=team-shop reason=vendor tags\"\n"
		adir := testutil.WriteFiles(t, t.TempDir(), map[string]string{
			"kustomization.yaml": "resources: [legacy.yaml]\n",
			"legacy.yaml":        waiveDeployment("legacy", "ghcr.io/shop/legacy:3.1", ann),
		})
		off := gate(t, "", "check", "-k", adir)
		if off.Code != 1 || !says(off.Stdout, "Deployment/legacy (ns shop)\n  WARNING [exception-ignored] metadata.annotations.kubectl-gate.dev/waive") {
			t.Errorf("without opt-in: exit %d\n%s", off.Code, off.Stdout)
		}
		on := gate(t, "", "check", "-k", adir, "--config", cfg("  exceptionsFromAnnotations: true\n"))
		if on.Code != 0 || !strings.Contains(on.Stdout, "waived by annotation kubectl-gate.dev/waive on Deployment/legacy (ns shop); owner team-shop") {
			t.Errorf("with opt-in: exit %d\n%s", on.Code, on.Stdout)
		}
	})
}

// TestE2EBaseline: run 1 writes the baseline; run 2 has the same findings
// with objects and files reordered and passes; run 3 adds one violation
// and fails naming only it.
func TestE2EBaseline(t *testing.T) {
	work := t.TempDir()
	b := filepath.Join(work, "gate-baseline.json")
	one := testutil.WriteFiles(t, filepath.Join(work, "one"), map[string]string{
		"kustomization.yaml": "resources: [a.yaml, b.yaml]\n",
		"a.yaml":             waiveDeployment("web", "ghcr.io/shop/web:1.4", "") + "---\n" + waiveDeployment("api", "ghcr.io/shop/api:2.0", ""),
		"b.yaml":             waiveDeployment("worker", "ghcr.io/shop/worker:7", ""),
	})
	r1 := gate(t, "", "check", "-k", one, "--write-baseline", b)
	if r1.Code != 0 || !strings.Contains(r1.Stdout, "3 existing (baseline)") {
		t.Fatalf("run 1: exit %d\n%s%s", r1.Code, r1.Stdout, r1.Stderr)
	}
	two := testutil.WriteFiles(t, filepath.Join(work, "two"), map[string]string{
		"kustomization.yaml": "resources: [workers/w.yaml, apps.yaml]\n",
		"workers/w.yaml":     "# moved\n\n" + waiveDeployment("worker", "ghcr.io/shop/worker:7", ""),
		"apps.yaml":          waiveDeployment("api", "ghcr.io/shop/api:2.0", "") + "---\n" + waiveDeployment("web", "ghcr.io/shop/web:1.4", ""),
	})
	r2 := gate(t, "", "check", "-k", two, "--baseline", b)
	if r2.Code != 0 || !strings.Contains(r2.Stdout, "PASS: 3 resource(s), 0 error(s), 0 warning(s), 3 existing (baseline)") {
		t.Fatalf("run 2: exit %d\n%s%s", r2.Code, r2.Stdout, r2.Stderr)
	}
	three := testutil.WriteFiles(t, filepath.Join(work, "three"), map[string]string{
		"kustomization.yaml": "resources: [apps.yaml]\n",
		"apps.yaml":          waiveDeployment("api", "ghcr.io/shop/api:2.0", "") + "---\n" + waiveDeployment("web", "ghcr.io/shop/web:1.4", "") + "---\n" + waiveDeployment("cron", "ghcr.io/shop/cron:1", ""),
	})
	r3 := gate(t, "", "check", "-k", three, "--baseline", b)
	if r3.Code != 1 {
		t.Fatalf("run 3: exit %d, want 1\n%s%s", r3.Code, r3.Stdout, r3.Stderr)
	}
	counted := strings.Split(r3.Stdout, "existing (baseline):")[0]
	if !says(counted, "Deployment/cron (ns shop)\n  ERROR [image-digest]") || strings.Contains(counted, "Deployment/web") || strings.Contains(counted, "Deployment/api") {
		t.Errorf("run 3 does not name only the new finding:\n%s", r3.Stdout)
	}
	if !strings.Contains(r3.Stdout, "1 error(s), 0 warning(s), 2 existing (baseline), 1 fixed") {
		t.Errorf("run 3 summary:\n%s", r3.Stdout)
	}
	bad := filepath.Join(work, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := gate(t, "", "check", "-k", one, "--baseline", bad); r.Code != 2 {
		t.Errorf("a bad baseline: exit %d, want 2\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
