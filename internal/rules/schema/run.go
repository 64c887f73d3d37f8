package schema

import (
	"context"
	"fmt"
	"slices"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	engine "github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// outcome is the one validation pass the four rules share.
type outcome struct {
	results []engine.Result
	err     error
}

func validate(c *rules.Context) outcome {
	return rules.Memo(c, "schema", func() outcome {
		v, err := validator(c)
		if err != nil {
			return outcome{err: err}
		}
		rs, err := v.Validate(context.Background(), c.Resources)
		return outcome{results: rs, err: err}
	})
}

// validatorOf is New's answer, shared by every run of objects of a
// streamed check (rules.RunMemo): a validator learns each kind once.
type validatorOf struct {
	v   *engine.Validator
	err error
}

// validator is the validator the configuration asks for.
func validator(c *rules.Context) (*engine.Validator, error) {
	o := rules.RunMemo(c, "schema/validator", func() validatorOf {
		v, err := engine.New(engine.Options{
			KubernetesVersion: c.Config.Schema.KubernetesVersion,
			CRDs:              c.CRDs,
			// The gate's own ImageLock (local config in the render) has
			// no API schema: the image-lock rule decodes it strictly.
			IgnoreMissing: append(slices.Clone(c.Config.Schema.IgnoreMissing), "kubectl-gate.dev/ImageLock"),
			// Off, the hand-written validation is not run at all (the
			// rules share this pass; its results would be dropped).
			SkipAPIValidation: c.Config.Rules[engine.RuleAPIValidation] == finding.Off,
		})
		return validatorOf{v, err}
	})
	return o.v, o.err
}

// family lists the rules that share the pass: the first of them that is on
// says when the pass could not run (schema first, as it always has).
var family = []string{engine.RuleSchema, engine.RuleAPIValidation, engine.RuleAPIRemoved, engine.RuleSchemaUnknown, engine.RuleAPIDeprecated}

// reporter is the rule that reports a pass that could not run: once, and
// by a rule that runs (schema: off with api-validation on must not turn
// "could not check" into silence).
func reporter(c *rules.Context) string {
	for _, id := range family {
		if c.Config.Rules[id] != finding.Off {
			return id
		}
	}
	return ""
}

// findings turns the pass's results of one rule into findings, each with
// the file and line of the field it names (place); when the pass could not
// run at all, the first of the family's rules that is on reports that as
// no verdict.
func findings(c *rules.Context, rule string, sev finding.Severity) []finding.Finding {
	o := validate(c)
	if o.err != nil {
		if rule != reporter(c) {
			return nil
		}
		return []finding.Finding{{Severity: sev, NoVerdict: true,
			Message: fmt.Sprintf("schema validation could not run: %v", o.err)}}
	}
	var out []finding.Finding
	for _, r := range o.results {
		if r.Rule != rule {
			continue
		}
		f := finding.Finding{
			Severity: sev,
			Message:  message(r),
			ResourceRef: &finding.ResourceRef{
				APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace, GenerateName: r.GenerateName,
			},
		}
		if r.Index >= 0 && r.Index < len(c.Resources) {
			f.File = place(c, c.Resources[r.Index], r.Field)
		}
		if r.Field != "" {
			f.Field = &finding.Field{Path: r.Field}
			if r.Value != "" {
				f.Field.CurrentValue = r.Value
			}
		}
		out = append(out, f)
	}
	return out
}

// message is the API server's reason; the field path is the finding's
// Field, which every format prints beside it.
func message(r engine.Result) string {
	return r.Reason
}
