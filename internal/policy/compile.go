package policy

import (
	"sync"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

var (
	envOnce sync.Once
	envSet  *environment.EnvSet
)

// baseEnv is the CEL environment the API server compiles policies with: the
// base environment of this Kubernetes release with strict cost checks.
func baseEnv() *environment.EnvSet {
	envOnce.Do(func() {
		envSet = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	})
	return envSet
}

// compile builds the evaluator for one policy the way the
// ValidatingAdmissionPolicy admission plugin does: variables first, then
// matchConditions, validations, auditAnnotations and messageExpressions,
// each against the stored-expressions environment (validating.compilePolicy
// is not exported, so the same exported pieces are assembled here).
func compile(p *admissionv1.ValidatingAdmissionPolicy) validating.Validator {
	vars := cel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	msgVars := cel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: false}
	c, err := cel.NewCompositedCompiler(baseEnv())
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, p.Spec.FailurePolicy, err)
	}
	c.CompileAndStoreVariables(variables(p.Spec.Variables), vars, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if len(p.Spec.MatchConditions) > 0 {
		conds := make([]cel.ExpressionAccessor, len(p.Spec.MatchConditions))
		for i := range p.Spec.MatchConditions {
			conds[i] = (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
		}
		matcher = matchconditions.NewMatcher(c.CompileCondition(conds, vars, environment.StoredExpressions),
			p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	return validating.NewValidator(
		c.CompileCondition(validations(p.Spec.Validations), vars, environment.StoredExpressions),
		matcher,
		c.CompileCondition(auditAnnotations(p.Spec.AuditAnnotations), vars, environment.StoredExpressions),
		c.CompileCondition(messageExpressions(p.Spec.Validations), msgVars, environment.StoredExpressions),
		p.Spec.FailurePolicy,
		nil,
	)
}

func variables(in []admissionv1.Variable) []cel.NamedExpressionAccessor {
	out := make([]cel.NamedExpressionAccessor, len(in))
	for i, v := range in {
		out[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	return out
}

func validations(in []admissionv1.Validation) []cel.ExpressionAccessor {
	out := make([]cel.ExpressionAccessor, len(in))
	for i, v := range in {
		out[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
	}
	return out
}

// messageExpressions keeps the validations' indexes: a validation without a
// messageExpression leaves a nil slot, as the validator expects.
func messageExpressions(in []admissionv1.Validation) []cel.ExpressionAccessor {
	out := make([]cel.ExpressionAccessor, len(in))
	for i, v := range in {
		if v.MessageExpression != "" {
			out[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	return out
}

func auditAnnotations(in []admissionv1.AuditAnnotation) []cel.ExpressionAccessor {
	out := make([]cel.ExpressionAccessor, len(in))
	for i, a := range in {
		out[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return out
}
