package fn

import (
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// result converts a finding to the KRM result shape.
func result(f rules.Finding) *framework.Result {
	r := &framework.Result{
		Message:  f.Message,
		Severity: severity(f.Severity),
		Tags:     map[string]string{"rule": f.Rule},
	}
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

func severity(s rules.Severity) framework.Severity {
	switch s {
	case rules.SeverityError:
		return framework.Error
	case rules.SeverityWarning:
		return framework.Warning
	}
	return framework.Info
}
