package fn

import (
	"fmt"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// result converts a finding to the KRM result shape.
func result(f finding.Finding) *framework.Result {
	r := &framework.Result{
		Message:  f.Message,
		Severity: severity(f.Severity),
		Tags:     map[string]string{"rule": f.Rule},
	}
	suppressed(r, f)
	if ref := f.ResourceRef; ref != nil {
		r.ResourceRef = &yaml.ResourceIdentifier{
			TypeMeta: yaml.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind},
			NameMeta: yaml.NameMeta{Name: ref.Name, Namespace: ref.Namespace},
		}
	}
	if f.Field != nil {
		r.Field = &framework.Field{Path: f.Field.Path, CurrentValue: f.Field.CurrentValue, ProposedValue: f.Field.ProposedValue}
	}
	if f.File != nil {
		r.File = &framework.File{Path: f.File.Path, Index: f.File.Index}
	}
	return r
}

func severity(s finding.Severity) framework.Severity {
	switch s {
	case finding.SeverityError:
		return framework.Error
	case finding.SeverityWarning:
		return framework.Warning
	}
	return framework.Info
}

// suppressed turns a waived finding into an info result that says who
// waived it: kustomize fails on error results, and a waived finding must
// not fail the build, yet must still be seen.
func suppressed(r *framework.Result, f finding.Finding) {
	s := f.Suppressed
	if s == nil {
		return
	}
	r.Severity = framework.Info
	r.Message = fmt.Sprintf("waived (%s): %s [%s; reason: %s; owner: %s; expires: %s]", f.Severity, f.Message, s.Source, s.Reason, s.Owner, s.Expires)
	r.Tags["suppressed"] = s.Kind
	r.Tags["owner"] = s.Owner
	r.Tags["expires"] = s.Expires
}
