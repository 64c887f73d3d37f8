package policy

import (
	"errors"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// compileErrors compiles every expression of a policy as the API server
// does before it stores one: against the new-expressions environment of
// this release, variables first, then matchConditions, validations, their
// messageExpressions and auditAnnotations. An expression that does not
// compile (or is over the cost budget) is refused on create whatever the
// failurePolicy: failurePolicy Ignore governs evaluation, not storage.
func compileErrors(p *admissionv1.ValidatingAdmissionPolicy) error {
	c, err := cel.NewCompositedCompiler(baseEnv())
	if err != nil {
		return fmt.Errorf("building the CEL environment: %w", err)
	}
	vars := cel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	msgVars := cel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: false}
	var errs []string
	check := func(field string, r cel.CompilationResult) {
		if r.Error != nil {
			errs = append(errs, fmt.Sprintf("%s: %s", field, r.Error.Detail))
		}
	}
	mode := environment.NewExpressions
	for i, v := range p.Spec.Variables {
		check(fmt.Sprintf("spec.variables[%d].expression", i), c.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, vars, mode))
	}
	for i := range p.Spec.MatchConditions {
		check(fmt.Sprintf("spec.matchConditions[%d].expression", i), c.CompileCELExpression((*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i]), vars, mode))
	}
	for i, v := range p.Spec.Validations {
		check(fmt.Sprintf("spec.validations[%d].expression", i), c.CompileCELExpression(&validating.ValidationCondition{Expression: v.Expression}, vars, mode))
		if v.MessageExpression != "" {
			check(fmt.Sprintf("spec.validations[%d].messageExpression", i), c.CompileCELExpression(&validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}, msgVars, mode))
		}
	}
	for i, a := range p.Spec.AuditAnnotations {
		check(fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), c.CompileCELExpression(&validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}, vars, mode))
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.New("the API server refuses it: " + strings.Join(errs, "; "))
}
