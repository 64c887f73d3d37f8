package waiver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/waiver"
)

// fixedClock is the injected clock: expiry is judged on a chosen day.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

var today = fixedClock(time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))

func decode(t *testing.T, spec string) *config.Spec {
	t.Helper()
	obj, err := config.Decode([]byte("apiVersion: kubectl-gate.dev/v1alpha1\nkind: Gate\nmetadata: {name: ci}\nspec:\n" + spec))
	if err != nil {
		t.Fatal(err)
	}
	return &obj.Spec
}

func web(rule, field string) finding.Finding {
	return finding.Finding{Rule: rule, Severity: finding.SeverityError, Message: rule + " fired",
		ResourceRef: &finding.ResourceRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "shop"},
		Field:       &finding.Field{Path: field}}
}

func fixed(id string) bool {
	return id == "render-empty" || id == "gate-placement" || id == "image-resolve"
}

func byRule(fs []finding.Finding, rule string) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

const digestException = `  exceptions:
  - rules: [image-digest]
    match: {kind: Deployment, namespace: shop, name: web}
    reason: vendor image published by tag only (OPS-12)
    owner: team-shop
    expires: %s
`

func TestExceptionWaivesOnlyItsRule(t *testing.T) {
	cfg := decode(t, strings.Replace(digestException, "%s", "2026-12-03", 1))
	set := waiver.New(cfg, "--config ci/gate.yaml", "ci/gate.yaml", today)
	fs := set.Apply([]finding.Finding{web("image-digest", "spec.template.spec.containers[0].image"), web("image-registry", "spec.template.spec.containers[0].image")},
		waiver.Scope{Config: cfg, Fixed: fixed})
	d, r := byRule(fs, "image-digest")[0], byRule(fs, "image-registry")[0]
	if d.Suppressed == nil || d.Suppressed.Owner != "team-shop" || d.Suppressed.Expires != "2026-12-03" || d.Suppressed.Source != "--config ci/gate.yaml spec.exceptions[0]" || !strings.Contains(d.Suppressed.Reason, "OPS-12") {
		t.Errorf("image-digest not waived as the entry says: %+v", d.Suppressed)
	}
	if r.Suppressed != nil {
		t.Errorf("an exception for image-digest hid image-registry on the same object: %+v", r.Suppressed)
	}
	if a := set.Audit(); len(a) != 0 {
		t.Errorf("a used, valid exception was audited: %+v", a)
	}
	rep := finding.Report{Findings: fs}
	if rep.Count(finding.SeverityError) != 1 || rep.Verdict(false) != finding.VerdictFail || rep.Suppressed("") != 1 {
		t.Errorf("counts: %d errors, %d suppressed", rep.Count(finding.SeverityError), rep.Suppressed(""))
	}
}

func TestExpiredExceptionIsRed(t *testing.T) {
	cfg := decode(t, strings.Replace(digestException, "%s", "2026-12-02", 1))
	set := waiver.New(cfg, "--config ci/gate.yaml", "ci/gate.yaml", today)
	fs := set.Apply([]finding.Finding{web("image-digest", "x")}, waiver.Scope{Config: cfg, Fixed: fixed})
	if fs[0].Suppressed != nil {
		t.Fatal("an expired exception still waives")
	}
	a := set.Audit()
	if len(a) != 1 || a[0].Rule != "exception-expired" || a[0].Severity != finding.SeverityError ||
		!strings.Contains(a[0].Message, "owner team-shop") || !strings.Contains(a[0].Message, "2026-12-02") || a[0].File.Path != "ci/gate.yaml" {
		t.Errorf("expired exception audit: %+v", a)
	}
}

func TestUnusedExceptionWarns(t *testing.T) {
	cfg := decode(t, strings.Replace(digestException, "%s", "2027-01-01", 1))
	set := waiver.New(cfg, "--config ci/gate.yaml", "", today)
	other := web("image-digest", "x")
	other.ResourceRef.Name = "worker"
	set.Apply([]finding.Finding{other}, waiver.Scope{Config: cfg, Fixed: fixed})
	a := set.Audit()
	if len(a) != 1 || a[0].Rule != "exception-unused" || a[0].Severity != finding.SeverityWarning || !strings.Contains(a[0].Message, "name: web") {
		t.Errorf("unused exception audit: %+v", a)
	}
}

func TestUnwaivableRulesIgnoreTheException(t *testing.T) {
	for name, c := range map[string]struct {
		spec string
		f    finding.Finding
	}{
		"render-empty is never waivable": {`  exceptions:
  - {rules: [render-empty], match: {namespace: shop}, reason: r, owner: o, expires: 2027-01-01}
`, web("render-empty", "")},
		"no verdict is never waivable": {`  exceptions:
  - {rules: [policy], match: {namespace: shop}, reason: r, owner: o, expires: 2027-01-01}
`, func() finding.Finding { f := web("policy", ""); f.NoVerdict = true; return f }()},
		"waivable: false in config": {`  rules: {image-digest: {severity: error, waivable: false}}
  exceptions:
  - {rules: [image-digest], match: {namespace: shop}, reason: r, owner: o, expires: 2027-01-01}
`, web("image-digest", "")},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := decode(t, c.spec)
			set := waiver.New(cfg, "--config g.yaml", "", today)
			fs := set.Apply([]finding.Finding{c.f}, waiver.Scope{Config: cfg, Fixed: fixed})
			if fs[0].Suppressed != nil {
				t.Fatal("an unwaivable finding was waived")
			}
			ig := byRule(fs, "exception-ignored")
			if len(ig) != 1 || !strings.Contains(ig[0].Message, "the finding stands") || !strings.Contains(ig[0].Message, c.f.Rule) {
				t.Errorf("the ignored exception is not said: %+v", fs)
			}
			if a := set.Audit(); len(a) != 0 {
				t.Errorf("an exception that matched was also called unused: %+v", a)
			}
		})
	}
}

func TestMatchApp(t *testing.T) {
	cfg := decode(t, `  exceptions:
  - {rules: [image-digest], match: {app: shop-prod}, reason: r, owner: o, expires: 2027-01-01}
`)
	set := waiver.New(cfg, "", "", today)
	in := web("image-digest", "a")
	fs := set.Apply([]finding.Finding{in}, waiver.Scope{Config: cfg, Fixed: fixed, Owners: []string{"argocd/shop-prod"}})
	if fs[0].Suppressed == nil {
		t.Error("a finding in the app's render is not waived by match.app")
	}
	fs = set.Apply([]finding.Finding{web("image-digest", "a")}, waiver.Scope{Config: cfg, Fixed: fixed, Owners: []string{"argocd/shop-staging"}})
	if fs[0].Suppressed != nil {
		t.Error("match.app waived another app's render")
	}
}

const annotated = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations:
    kubectl-gate.dev/waive: "%s"
spec: {}
`

func TestAnnotationWaivers(t *testing.T) {
	for name, c := range map[string]struct {
		fromAnnotations bool
		value           string
		waived          bool
		audit           string
	}{
		"off by default":    {false, "image-digest expires=2027-01-01 owner=me reason=vendor tags", false, "exception-ignored"},
		"valid when opted":  {true, "image-digest expires=2027-01-01 owner=me reason=vendor tags only", true, ""},
		"missing owner":     {true, "image-digest expires=2027-01-01 reason=x", false, "exception-invalid"},
		"expired":           {true, "image-digest expires=2026-01-01 owner=me reason=x", false, "exception-expired"},
		"other rule unused": {true, "image-registry expires=2027-01-01 owner=me reason=x", false, "exception-unused"},
	} {
		t.Run(name, func(t *testing.T) {
			spec := "  exceptionsFromAnnotations: false\n"
			if c.fromAnnotations {
				spec = "  exceptionsFromAnnotations: true\n"
			}
			cfg := decode(t, spec)
			nodes, err := render.Parse([]byte(strings.Replace(annotated, "%s", c.value, 1)), "d.yaml")
			if err != nil {
				t.Fatal(err)
			}
			set := waiver.New(cfg, "", "", today)
			fs := set.Apply([]finding.Finding{web("image-digest", "x")}, waiver.Scope{Config: cfg, Fixed: fixed, Resources: nodes})
			if (fs[0].Suppressed != nil) != c.waived {
				t.Fatalf("waived = %v, want %v", fs[0].Suppressed != nil, c.waived)
			}
			if c.waived && (fs[0].Suppressed.Kind != "annotation" || fs[0].Suppressed.Reason != "vendor tags only") {
				t.Errorf("suppression: %+v", fs[0].Suppressed)
			}
			if c.audit == "" && len(fs) != 1 || c.audit != "" && (len(fs) != 2 || fs[1].Rule != c.audit) {
				t.Errorf("audit findings: %+v, want %q", fs[1:], c.audit)
			}
		})
	}
}

func TestInTreeExceptionsAreIgnored(t *testing.T) {
	trusted := decode(t, "")
	obj, err := config.Decode([]byte(`apiVersion: kubectl-gate.dev/v1alpha1
kind: Gate
metadata: {name: overlay}
spec:
  exceptions:
  - {rules: [image-digest], match: {namespace: shop}, reason: r, owner: o, expires: 2027-01-01}
`))
	if err != nil {
		t.Fatal(err)
	}
	spec := config.Tighten(*trusted, obj.Spec, nil)
	set := waiver.New(trusted, "", "", today)
	fs := set.Apply([]finding.Finding{web("image-digest", "x")}, waiver.Scope{Config: &spec, Fixed: fixed, InTree: obj})
	if fs[0].Suppressed != nil {
		t.Fatal("an in-tree Gate's exception waived a finding")
	}
	if ig := byRule(fs, "exception-ignored"); len(ig) != 1 || !strings.Contains(ig[0].Message, "may only tighten") {
		t.Errorf("no warning about the in-tree exceptions: %+v", fs)
	}
}
