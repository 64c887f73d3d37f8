package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
)

// checkRun is what check makes of a run: the units, the report as JSON and
// as text, and the verdicts.
type checkRun struct {
	units, reportJSON, reportText, verdicts string
	dropped                                 int // units whose trees were dropped before the end
}

// runCheck runs inputs as check does, holding every render until the end
// (release false) or dropping each render's trees once nothing reads them
// (release true, as check does).
func runCheck(t *testing.T, in pipeline.Inputs, insecure string, release bool) checkRun {
	t.Helper()
	o := pipeline.Options{ReleaseRenders: release, Version: "v0.0.0-test",
		Flags: func(s *config.Spec) error {
			s.Images.InsecureRegistries = append(s.Images.InsecureRegistries, insecure)
			return nil
		}}
	res, err := pipeline.Run(context.Background(), in, o)
	if err != nil {
		t.Fatal(err)
	}
	var r checkRun
	total := res.Report()
	var units, verdicts []string
	for _, u := range res.Units {
		units = append(units, u.Input()+" | "+u.Config)
		v := "error: " + fmt.Sprint(u.Err)
		if u.Err == nil {
			v = fmt.Sprintf("%s %d resources, %s with failOn warning", u.Report.Verdict(false), u.Report.Resources, u.Report.Verdict(true))
		}
		verdicts = append(verdicts, u.Input()+": "+v)
		if u.Err == nil && u.Resources == nil && u.Report.Resources > 0 {
			r.dropped++
		}
	}
	verdicts = append(verdicts, fmt.Sprintf("run: %s, %s with failOn warning (config says %v)", total.Verdict(false), total.Verdict(true), res.FailOnWarning))
	b, err := json.MarshalIndent(units, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	r.units = string(b)
	b, err = json.MarshalIndent(verdicts, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	r.verdicts = string(b)
	var text, js bytes.Buffer
	if err := report.Write(&text, total, report.Options{Format: "text"}); err != nil {
		t.Fatal(err)
	}
	if err := report.Write(&js, total, report.Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	r.reportText, r.reportJSON = text.String(), js.String()
	return r
}

// TestReleaseRendersCheckReportsTheSame: check dropping each render's
// trees once nothing reads them (Options.ReleaseRenders: each input
// holding no Argo CD or Flux object checked as soon as it is rendered,
// each leaf Application source, each unit no other unit reads) reports
// byte for byte what check holding every render until the end reports:
// units, JSON and text report, verdicts, on newReleaseFixture's cases.
func TestReleaseRendersCheckReportsTheSame(t *testing.T) {
	f := newReleaseFixture(t)
	for _, c := range f.cases {
		t.Run(c.name, func(t *testing.T) {
			whole := runCheck(t, c.in, f.reg.Host, false)
			dropped := runCheck(t, c.in, f.reg.Host, true)
			for _, d := range []struct{ what, whole, dropped string }{
				{"units", whole.units, dropped.units},
				{"report (json)", whole.reportJSON, dropped.reportJSON},
				{"report (text)", whole.reportText, dropped.reportText},
				{"verdicts", whole.verdicts, dropped.verdicts},
			} {
				if d.whole != d.dropped {
					t.Errorf("dropping the checked renders changes the %s:\nholding every render:\n%s\ndropped:\n%s", d.what, d.whole, d.dropped)
				}
			}
			if whole.dropped != 0 {
				t.Errorf("the run holding every render dropped %d", whole.dropped)
			}
			if dropped.dropped != c.dropped {
				t.Errorf("want %d units' trees dropped, got %d", c.dropped, dropped.dropped)
			}
			if !bytes.Contains([]byte(whole.reportJSON), []byte(`"rule"`)) && c.name == "estate" {
				t.Errorf("the estate finds nothing:\n%s", whole.reportText)
			}
			t.Logf("%s: %d units' trees dropped; %s", c.name, dropped.dropped, lastLine(dropped.reportText))
		})
	}
}
