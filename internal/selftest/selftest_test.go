package selftest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
	"github.com/kubectl-gate/kubectl-gate/internal/waiver"
)

const pinned = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "ghcr.io/example/web:1.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}]}
`

// TestRunOffRule: a rule the configuration turns off is listed as "off",
// its mutants are not run, and the row does not count as missed.
func TestRunOffRule(t *testing.T) {
	cfg := config.Default()
	cfg.Rules["image-digest"] = finding.Off
	rows := runSelftest(t, ruletest.Parse(t, pinned), cfg)
	var off int
	for _, row := range rows {
		if row.Rule != "image-digest" {
			continue
		}
		if row.Got != "off" || !row.Caught() {
			t.Errorf("image-digest row %+v, want off and not missed", row)
		}
		off++
	}
	if off != 1 {
		t.Errorf("%d image-digest rows, want one off row", off)
	}
}

// TestRunFinishedJudgesTheFinishedBaseline: the shell's finish step runs
// before the baseline's verdict, so a finding it drops does not make the
// baseline red, and one it adds does.
func TestRunFinishedJudgesTheFinishedBaseline(t *testing.T) {
	res := ruletest.Parse(t, pinned)
	opts := gate.Options{Config: config.Default()}
	add := func(rep *finding.Report) {
		rep.Findings = append(rep.Findings, finding.Finding{Rule: "render-empty", Severity: finding.SeverityError, Message: "added"})
	}
	rows, base, err := selftest.RunFinished(context.Background(), res, opts, gate.Deps{}, false, add)
	if err != nil || rows != nil || base == nil || len(base.Findings) != 1 {
		t.Fatalf("a finding added by finish: rows %v, base %+v, err %v", rows, base, err)
	}
	rows, _, err = selftest.RunFinished(context.Background(), res, opts, gate.Deps{}, false, func(*finding.Report) {})
	if err != nil || rows == nil {
		t.Fatalf("a clean baseline: rows %v, err %v", rows, err)
	}
}

// TestRunWaivedMutant: an exception for image-digest on the Deployment
// waives the finding its mutant makes, so the gate would let the mutant
// through: the row is "waived", names the exception, and is missed; an
// exception for another rule on the same object changes nothing.
func TestRunWaivedMutant(t *testing.T) {
	for _, c := range []struct {
		rule, want string
	}{{"image-digest", "waived"}, {"image-registry", "fail"}} {
		cfg := config.Default()
		cfg.Exceptions = []config.Exception{{Rules: []string{c.rule}, Match: config.ExceptionMatch{Kind: "Deployment", Name: "web"},
			Reason: "vendor ships tags only", Owner: "team-shop", Expires: "2999-12-31"}}
		set := waiver.New(cfg, "--config gate.yaml", "gate.yaml", waiver.SystemClock{})
		rows, base, err := selftest.Run(context.Background(), ruletest.Parse(t, pinned), gate.Options{Config: cfg, Waivers: set}, gate.Deps{}, false)
		if err != nil || rows == nil {
			t.Fatalf("exception for %s: rows %v, base %+v, err %v", c.rule, rows, base, err)
		}
		n := 0
		for _, row := range rows {
			if row.Rule != "image-digest" || row.Got == "n/a" {
				continue
			}
			n++
			if row.Got != c.want {
				t.Errorf("exception for %s: image-digest mutant %q got %s, want %s", c.rule, row.Mutant, row.Got, c.want)
			}
			if c.want == "waived" && (row.Caught() || !strings.Contains(row.WaivedBy, "spec.exceptions[0] (owner team-shop, expires 2999-12-31")) {
				t.Errorf("waived row %+v: want missed, naming the exception", row)
			}
			if c.want == "fail" && (!row.Caught() || row.WaivedBy != "") {
				t.Errorf("row %+v: want caught", row)
			}
		}
		if n == 0 {
			t.Errorf("exception for %s: no image-digest mutant ran", c.rule)
		}
	}
}
