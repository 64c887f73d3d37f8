package baseline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/baseline"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

func all(finding.Finding) bool { return true }

func f(kind, name, field, msg string) finding.Finding {
	return finding.Finding{Rule: "image-digest", Severity: finding.SeverityError, Message: msg,
		ResourceRef: &finding.ResourceRef{APIVersion: "apps/v1", Kind: kind, Name: name, Namespace: "shop"},
		Field:       &finding.Field{Path: field}, File: &finding.File{Path: "base/deploy.yaml", Line: 12}}
}

func TestFingerprintIgnoresVolatileParts(t *testing.T) {
	a := f("Deployment", "web", "spec.template.spec.containers[0].image", `image "ghcr.io/shop/web:1.4" has no digest (set by overlays/prod/kustomization.yaml:12)`)
	b := a
	b.Message = `image "ghcr.io/shop/web:1.4" has no digest (set by clusters/prod/kustomization.yaml:40)`
	b.File = &finding.File{Path: "moved/deploy.yaml", Line: 99}
	b.Input = "-k clusters/prod"
	b.ResourceRef = &finding.ResourceRef{APIVersion: "apps/v1beta2", Kind: "Deployment", Name: "web", Namespace: "shop"}
	if x, y := baseline.EntryOf(a).Fingerprint, baseline.EntryOf(b).Fingerprint; x != y {
		t.Errorf("moving the file, the line or the input changed the fingerprint: %s %s", x, y)
	}
	d1 := f("Deployment", "web", "x", "stale: tag now at sha256:"+strings.Repeat("a", 64))
	d2 := f("Deployment", "web", "x", "stale: tag now at sha256:"+strings.Repeat("b", 64))
	if baseline.EntryOf(d1).Fingerprint != baseline.EntryOf(d2).Fingerprint {
		t.Error("a digest in the message changed the fingerprint")
	}
	for name, other := range map[string]finding.Finding{
		"another object":  f("Deployment", "worker", a.Field.Path, a.Message),
		"another kind":    f("StatefulSet", "web", a.Field.Path, a.Message),
		"another field":   f("Deployment", "web", "spec.template.spec.containers[1].image", a.Message),
		"another message": f("Deployment", "web", a.Field.Path, `image "ghcr.io/shop/api:1.4" has no digest`),
	} {
		if baseline.EntryOf(other).Fingerprint == baseline.EntryOf(a).Fingerprint {
			t.Errorf("%s has the same fingerprint", name)
		}
	}
}

func TestApplyCountsExistingAndFixed(t *testing.T) {
	run1 := []finding.Finding{f("Deployment", "web", "a", "m1"), f("Deployment", "web", "a", "m1"), f("Deployment", "api", "a", "m2")}
	b := baseline.Build(run1, all)
	path := filepath.Join(t.TempDir(), "baseline.json")
	if err := b.Write(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := baseline.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// run 2: the api finding is fixed, web's two stay, a third copy is new.
	run2 := []finding.Finding{f("Deployment", "web", "a", "m1"), f("Deployment", "web", "a", "m1"), f("Deployment", "web", "a", "m1")}
	fixed := loaded.Apply(run2, "baseline b.json", all)
	if fixed != 1 {
		t.Errorf("fixed = %d, want 1", fixed)
	}
	rep := finding.Report{Findings: run2}
	if rep.Suppressed(finding.SuppressedByBaseline) != 2 || rep.Count(finding.SeverityError) != 1 {
		t.Errorf("existing %d, new errors %d; want 2 and 1", rep.Suppressed(finding.SuppressedByBaseline), rep.Count(finding.SeverityError))
	}
}

func TestParseRejects(t *testing.T) {
	good := baseline.Build([]finding.Finding{f("Deployment", "web", "a", "m")}, all)
	path := filepath.Join(t.TempDir(), "b.json")
	if err := good.Write(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for name, c := range map[string]struct{ doc, says string }{
		"edited entry":  {strings.Replace(string(data), `"name": "web"`, `"name": "api"`, 1), "fingerprint"},
		"unknown field": {`{"version":1,"entries":[],"extra":1}`, "unknown field"},
		"version":       {`{"version":2,"entries":[]}`, "version 2"},
		"trailing":      {`{"version":1,"entries":[]} {}`, "data after"},
		"not json":      {`version: 1`, "decoding"},
	} {
		if _, err := baseline.Parse([]byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %q", name, err, c.says)
		}
	}
}

// FuzzParse: the baseline file may come from a pull request. Parse never
// panics, and what it accepts applies and rebuilds consistently.
func FuzzParse(f *testing.F) {
	seed := baseline.Build([]finding.Finding{f0("web", "m"), f0("web", "m"), f0("api", `image "x@sha256:`+strings.Repeat("1", 64)+`" (set by a.yaml:3)`)}, all)
	path := filepath.Join(f.TempDir(), "seed.json")
	if err := seed.Write(path); err != nil {
		f.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	f.Add(data)
	f.Add([]byte(`{"version":1,"entries":[]}`))
	f.Add([]byte(`{"version":1,"entries":[{"fingerprint":"00","rule":"x","object":{},"message":"","count":-1}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := baseline.Parse(data)
		if err != nil {
			return
		}
		for _, e := range b.Entries {
			if e.Rule == "" || e.Count < 0 {
				t.Fatalf("accepted entry %+v", e)
			}
		}
		b.Apply([]finding.Finding{f0("web", "m")}, "fuzz", all)
	})
}

func f0(name, msg string) finding.Finding { return f("Deployment", name, "spec.x", msg) }
