package pipeline

import (
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/waiver"
)

// newWaivers returns the run's exceptions: the trusted config's (the
// built-in defaults have none), shared by every unit and audited once in
// Result.Report.
func newWaivers(o Options) *waiver.Set {
	clock := o.Clock
	if clock == nil {
		clock = waiver.SystemClock{}
	}
	if o.Config == nil {
		return waiver.New(nil, "", "", clock)
	}
	source := "--config " + o.ConfigPath
	if o.ConfigPath == "" {
		source = "the trusted config"
	}
	return waiver.New(&o.Config.Spec, source, o.ConfigPath, clock)
}

// owners names the Argo CD Applications or the Flux object whose render a
// unit is (namespace/name), for an exception's match.app.
func (u *Unit) owners() []string {
	switch s := u.Source.(type) {
	case *AppSource:
		out := make([]string, 0, len(s.Apps))
		for _, a := range s.Apps {
			name, _, _ := strings.Cut(a, " ") // "NS/NAME spec.source"
			out = append(out, name)
		}
		return out
	case *FluxKustomization:
		return []string{lastField(s.Name)}
	case *HelmRelease:
		return []string{lastField(s.Name)}
	}
	return nil
}

func lastField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// Suppressible returns whether a finding may be recorded in or absorbed by
// a baseline: what an exception of spec could waive (never what is no
// verdict or of an unwaivable rule), and nothing an exception already
// waived (it has its own owner and expiry).
func Suppressible(spec *config.Spec) func(finding.Finding) bool {
	return func(f finding.Finding) bool {
		return f.Severity != finding.SeverityInfo && !f.NoVerdict && !gate.Unwaivable(f.Rule) &&
			(spec == nil || spec.Waivable(f.Rule)) &&
			(f.Suppressed == nil || f.Suppressed.Kind == finding.SuppressedByBaseline)
	}
}
