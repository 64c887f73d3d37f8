package selftest_test

import (
	"context"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/ruletest"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
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
