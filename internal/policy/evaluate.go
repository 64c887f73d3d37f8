package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/warning"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/workers"
)

// Options tune an evaluation.
type Options struct {
	// NamespaceLabels gives the labels of Namespaces the render does not
	// declare (or overrides the render's), by name.
	NamespaceLabels map[string]map[string]string
	// DefaultNamespace is where a namespaced object without a namespace
	// goes, as kubectl would put it; "default" when empty.
	DefaultNamespace string
}

// failureAnnotation is the audit annotation the dispatcher writes for
// bindings with validationActions Audit.
const failureAnnotation = "validation.policy.admission.k8s.io/validation_failure"

// localConfig marks objects kustomize and kubectl never apply.
const localConfig = "config.kubernetes.io/local-config"

// Evaluate judges every object of the render against the set's policies.
// Policies and bindings declared in the render count only when they are in
// set (see [FromRender]); parameters are looked up in set and the render.
// An error means no verdict at all.
func Evaluate(ctx context.Context, set *Set, render []*yaml.RNode, opts Options) (*Report, error) {
	return evaluateRender(ctx, set, false, render, opts)
}

// evaluateRender is [Evaluate], with the render's own policies and
// bindings added to set when fromRender is set. The objects the evaluator
// consults as a whole (Namespaces, CRDs, admission objects, objects of a
// paramKind) are decoded up front; every other object is decoded by the
// worker that evaluates it and dropped after, so the decoded form of the
// whole render is never held at once.
func evaluateRender(ctx context.Context, set *Set, fromRender bool, render []*yaml.RNode, opts Options) (*Report, error) {
	if set == nil {
		set = &Set{}
	}
	held := map[int]*unstructured.Unstructured{}
	decodeWhere := func(pick func(apiVersion, kind string) bool) error {
		for i, r := range render {
			if _, done := held[i]; done || r.YNode().Kind != yaml.MappingNode || !pick(r.GetApiVersion(), r.GetKind()) {
				continue
			}
			u, err := toUnstructured(r)
			if err != nil {
				return fmt.Errorf("read object %d of the render: %w", i, err)
			}
			held[i] = u
		}
		return nil
	}
	inOrder := func() []*unstructured.Unstructured {
		idx := make([]int, 0, len(held))
		for i := range held {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		out := make([]*unstructured.Unstructured, len(idx))
		for k, i := range idx {
			out[k] = held[i]
		}
		return out
	}
	err := decodeWhere(func(apiVersion, kind string) bool {
		return (apiVersion == "v1" && kind == "Namespace") || (apiVersion == apiextensionsGV && kind == kindCRD) ||
			strings.HasPrefix(apiVersion, admissionGroup+"/")
	})
	if err != nil {
		return nil, err
	}
	if fromRender {
		fr, err := FromRender(inOrder())
		if err != nil {
			return nil, err
		}
		set = set.Merge(fr)
	}
	paramKinds := map[schema.GroupVersionKind]bool{}
	for _, p := range set.Policies {
		if gvk, ok := paramGVK(p); ok {
			paramKinds[gvk] = true
		}
	}
	if len(paramKinds) > 0 {
		err := decodeWhere(func(apiVersion, kind string) bool {
			gv, err := schema.ParseGroupVersion(apiVersion)
			return err == nil && paramKinds[gv.WithKind(kind)]
		})
		if err != nil {
			return nil, err
		}
	}
	e, err := newEvaluator(set, inOrder(), opts)
	if err != nil {
		return nil, err
	}
	// Objects are independent, as concurrent requests are to the API
	// server's admission plugin: evaluate them on every core, results kept
	// in input order.
	per := make([][]Result, len(render))
	counts := make([]int, len(render))
	errs := make([]error, len(render))
	var failed atomic.Bool
	workers.Each(len(render), func(i int) bool {
		if err := ctx.Err(); err != nil {
			errs[i] = fmt.Errorf("evaluate policies: %w", err)
			failed.Store(true)
			return false
		}
		u := held[i]
		if u == nil {
			var err error
			if u, err = toUnstructured(render[i]); err != nil {
				errs[i] = fmt.Errorf("read object %d of the render: %w", i, err)
				failed.Store(true)
				return false
			}
		}
		per[i], counts[i], errs[i] = e.object(ctx, i, u)
		if errs[i] != nil {
			failed.Store(true)
			return false
		}
		return true
	})
	if failed.Load() {
		// The first object in input order that failed: the indexes below
		// it were all taken, and finished, before the workers stopped.
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
	}
	rep := &Report{Results: e.static}
	for i := range render {
		rep.Results = append(rep.Results, per[i]...)
		rep.Evaluated += counts[i]
	}
	rep.Results = append(rep.Results, e.unbound()...)
	return rep, nil
}

type hook struct {
	policy  *admissionv1.ValidatingAdmissionPolicy
	binding *admissionv1.ValidatingAdmissionPolicyBinding
	full    validating.PolicyHook
	// strict is the same policy under failurePolicy Fail, for Ignore
	// policies: what it reports and the policy does not is an error the
	// policy swallowed.
	strict *validating.PolicyHook
	// namespaceSensitive: a namespaceSelector or namespaceObject use.
	namespaceSensitive bool
	matched            bool
}

type evaluator struct {
	opts    Options
	kinds   kinds
	ns      *namespaces
	matcher generic.PolicyMatcher
	ifaces  *objectInterfaces
	hooks   []*hook
	static  []Result
	mu      sync.Mutex
}

func newEvaluator(set *Set, objs []*unstructured.Unstructured, opts Options) (*evaluator, error) {
	if opts.DefaultNamespace == "" {
		opts.DefaultNamespace = metav1.NamespaceDefault
	}
	ns, err := newNamespaces(objs, opts.NamespaceLabels)
	if err != nil {
		return nil, err
	}
	var crds []*unstructured.Unstructured
	crds = append(crds, set.CRDs...)
	for _, u := range objs {
		if u.GetAPIVersion() == apiextensionsGV && u.GetKind() == kindCRD {
			crds = append(crds, u)
		}
	}
	e := &evaluator{
		opts:    opts,
		kinds:   newKinds(crds),
		ns:      ns,
		matcher: generic.NewPolicyMatcher(matching.NewMatcher(ns.lister, nsClient{})),
	}
	e.ifaces = newObjectInterfaces(e.kinds)
	if err := e.buildHooks(set, objs); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *evaluator) buildHooks(set *Set, objs []*unstructured.Unstructured) error {
	byName := map[string]*admissionv1.ValidatingAdmissionPolicy{}
	for _, p := range set.Policies {
		if _, dup := byName[p.Name]; dup {
			return &ConfigError{Source: "policies", Err: fmt.Errorf("ValidatingAdmissionPolicy %q is given twice", p.Name)}
		}
		byName[p.Name] = p
	}
	bound := map[string]bool{}
	bindings := append([]*admissionv1.ValidatingAdmissionPolicyBinding{}, set.Bindings...)
	sort.SliceStable(bindings, func(i, j int) bool { return bindings[i].Name < bindings[j].Name })
	for _, b := range bindings {
		p := byName[b.Spec.PolicyName]
		if p == nil {
			e.static = append(e.static, Result{Action: Unbound, Binding: b.Name, Policy: b.Spec.PolicyName, Index: -1,
				Message: fmt.Sprintf("ValidatingAdmissionPolicyBinding '%s' names ValidatingAdmissionPolicy '%s', which is not given: the binding checks nothing", b.Name, b.Spec.PolicyName)})
			continue
		}
		bound[p.Name] = true
		h, err := e.newHook(p, b, set, objs)
		if err != nil {
			return err
		}
		e.hooks = append(e.hooks, h)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := byName[n]
		if !bound[n] {
			e.static = append(e.static, Result{Action: Unbound, Policy: n, Index: -1,
				Message: fmt.Sprintf("ValidatingAdmissionPolicy '%s' has no binding: it checks nothing", n)})
		}
		if len(p.Spec.AuditAnnotations) > 0 {
			e.static = append(e.static, Result{Action: Note, Policy: n, Index: -1,
				Message: fmt.Sprintf("ValidatingAdmissionPolicy '%s': auditAnnotations only reach the API server's audit log; the gate does not evaluate them", n)})
		}
	}
	return nil
}

func (e *evaluator) newHook(p *admissionv1.ValidatingAdmissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding, set *Set, objs []*unstructured.Unstructured) (*hook, error) {
	full, err := e.policyHook(p, b, set, objs)
	if err != nil {
		return nil, err
	}
	h := &hook{policy: p, binding: b, full: full, namespaceSensitive: namespaceSensitive(p, b)}
	if p.Spec.FailurePolicy != nil && *p.Spec.FailurePolicy == admissionv1.Ignore {
		strictPolicy := p.DeepCopy()
		fail := admissionv1.Fail
		strictPolicy.Spec.FailurePolicy = &fail
		strict, err := e.policyHook(strictPolicy, b, set, objs)
		if err != nil {
			return nil, err
		}
		h.strict = &strict
	}
	return h, nil
}

func (e *evaluator) policyHook(p *admissionv1.ValidatingAdmissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding, set *Set, objs []*unstructured.Unstructured) (validating.PolicyHook, error) {
	h := validating.PolicyHook{Policy: p, Bindings: []*admissionv1.ValidatingAdmissionPolicyBinding{b}, Evaluator: compile(p)}
	gvk, ok := paramGVK(p)
	if !ok {
		return h, nil
	}
	gvr, scope, err := e.kinds.scope(gvk)
	if err != nil {
		// As the API server: an unknown paramKind is the policy's
		// configuration error, judged by its failurePolicy.
		h.ConfigurationError = err
		return h, nil
	}
	var params []*unstructured.Unstructured
	for _, src := range [][]*unstructured.Unstructured{set.Params, objs} {
		for _, u := range src {
			if u.GroupVersionKind() == gvk {
				n, err := normalize(u)
				if err != nil {
					return h, &ConfigError{Source: "parameters", Err: err}
				}
				params = append(params, n)
			}
		}
	}
	inf, err := newParamInformer(gvr.GroupResource(), params)
	if err != nil {
		return h, err
	}
	h.ParamInformer, h.ParamScope = inf, scope
	return h, nil
}

// namespaceSensitive tells whether the verdict depends on the Namespace's
// labels or contents.
func namespaceSensitive(p *admissionv1.ValidatingAdmissionPolicy, b *admissionv1.ValidatingAdmissionPolicyBinding) bool {
	if sel := p.Spec.MatchConstraints.NamespaceSelector; sel != nil && !emptySelector(sel) {
		return true
	}
	if m := b.Spec.MatchResources; m != nil && m.NamespaceSelector != nil && !emptySelector(m.NamespaceSelector) {
		return true
	}
	var exprs []string
	for _, v := range p.Spec.Variables {
		exprs = append(exprs, v.Expression)
	}
	for _, c := range p.Spec.MatchConditions {
		exprs = append(exprs, c.Expression)
	}
	for _, v := range p.Spec.Validations {
		exprs = append(exprs, v.Expression, v.MessageExpression)
	}
	for _, x := range exprs {
		if strings.Contains(x, "namespaceObject") {
			return true
		}
	}
	return false
}

func emptySelector(s *metav1.LabelSelector) bool {
	return len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// object evaluates every binding on one object.
func (e *evaluator) object(ctx context.Context, i int, u *unstructured.Unstructured) ([]Result, int, error) {
	if skipObject(u) {
		return nil, 0, nil
	}
	gvk := u.GroupVersionKind()
	u, err := normalize(u)
	if err != nil {
		return []Result{{Action: NoVerdict, Index: i, Message: err.Error()}}, 0, nil
	}
	gvr, namespaced, _ := e.kinds.mapping(gvk)
	ns := ""
	if namespaced {
		ns = u.GetNamespace()
		if ns == "" {
			ns = e.opts.DefaultNamespace
		}
	}
	knownNS := ns == "" || e.ns.known[ns] || (gvk.Kind == "Namespace" && gvk.Group == "")
	if !knownNS {
		if err := e.ns.stand(ns); err != nil {
			return nil, 0, err
		}
	}
	var out []Result
	n := 0
	for _, h := range e.hooks {
		attr := newAttributes(u, gvk, gvr, ns)
		matched, matchKind, err := e.matches(attr, h)
		if err == nil && !matched {
			if r, ok := e.builtinEquivalent(h, u, gvk, gvr, ns, i); ok {
				e.mu.Lock()
				h.matched = true
				e.mu.Unlock()
				out = append(out, r)
			}
			continue
		}
		e.mu.Lock()
		h.matched = true
		e.mu.Unlock()
		if !knownNS && h.namespaceSensitive {
			out = append(out, Result{Action: NoVerdict, Policy: h.policy.Name, Binding: h.binding.Name, Index: i,
				Message: fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' depends on namespace %q, which is neither in the render nor in --namespace-labels", h.policy.Name, h.binding.Name, ns)})
			continue
		}
		if err == nil && matchKind != gvk && e.kinds.crds[gvk.GroupKind()].webhookConversion {
			out = append(out, Result{Action: NoVerdict, Policy: h.policy.Name, Binding: h.binding.Name, Index: i,
				Message: fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' sees %s %q as %s (matchPolicy Equivalent): %v",
					h.policy.Name, h.binding.Name, gvk.Kind, u.GetName(), matchKind.GroupVersion(), errWebhookConversion)})
			continue
		}
		n++
		res, err := e.dispatch(ctx, h.full, u, gvk, gvr, ns, i)
		if err != nil {
			return nil, 0, err
		}
		if h.strict != nil && !hasNoVerdict(res) {
			strict, err := e.dispatch(ctx, *h.strict, u, gvk, gvr, ns, i)
			if err != nil {
				return nil, 0, err
			}
			res = append(res, swallowed(res, strict)...)
		}
		out = append(out, res...)
	}
	return out, n, nil
}

// matches runs the policy's and the binding's match criteria and returns
// the kind the policy sees the object as (another version under
// matchPolicy Equivalent); a criteria error is left to the dispatcher,
// which judges it by failurePolicy.
func (e *evaluator) matches(attr admission.Attributes, h *hook) (bool, schema.GroupVersionKind, error) {
	ok, _, kind, err := e.matcher.DefinitionMatches(attr, e.ifaces, validating.NewValidatingAdmissionPolicyAccessor(h.policy))
	if err != nil || !ok {
		return ok, kind, err
	}
	ok, err = e.matcher.BindingMatches(attr, e.ifaces, validating.NewValidatingAdmissionPolicyBindingAccessor(h.binding))
	return ok, kind, err
}

// skipObject leaves out what the API server would not admit through this
// plugin (admission configuration itself) and what is never applied.
func skipObject(u *unstructured.Unstructured) bool {
	if u.GroupVersionKind().Group == admissionGroup {
		return true
	}
	return u.GetAnnotations()[localConfig] == "true"
}

func newAttributes(u *unstructured.Unstructured, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, ns string) admission.Attributes {
	return admission.NewAttributesRecord(u, nil, gvk, ns, u.GetName(), gvr, "", admission.Create,
		&metav1.CreateOptions{}, false, &user.DefaultInfo{})
}

// dispatch runs the API server's dispatcher for one policy-binding pair on
// one object and turns its error, warnings and audit annotations into
// results.
func (e *evaluator) dispatch(ctx context.Context, h validating.PolicyHook, u *unstructured.Unstructured, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, ns string, i int) ([]Result, error) {
	attr := &annotated{Attributes: newAttributes(u, gvk, gvr, ns)}
	warnings := &warningRecorder{}
	authz := &noVerdictAuthorizer{}
	d := validating.NewDispatcher(authz, e.matcher)
	err := d.Dispatch(warning.WithWarningRecorder(ctx, warnings), attr, e.ifaces, []validating.PolicyHook{h})
	policy, binding := h.Policy.Name, h.Bindings[0].Name
	if authz.asked {
		return []Result{{Action: NoVerdict, Policy: policy, Binding: binding, Index: i,
			Message: fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' asks the authorizer (%s), which only the API server can answer for the user who applies", policy, binding, authz.what)}}, nil
	}
	var out []Result
	if err != nil {
		var st *apierrors.StatusError
		if !errors.As(err, &st) {
			if errors.Is(err, errUnknownNamespace) {
				return []Result{{Action: NoVerdict, Policy: policy, Binding: binding, Index: i, Message: err.Error()}}, nil
			}
			return nil, fmt.Errorf("evaluate ValidatingAdmissionPolicy %q on %s %q: %w", policy, gvk.Kind, u.GetName(), err)
		}
		msg := st.ErrStatus.Message
		if d := st.ErrStatus.Details; d != nil && len(d.Causes) > 0 {
			msg = d.Causes[len(d.Causes)-1].Message
		}
		out = append(out, Result{Action: Deny, Policy: policy, Binding: binding, Index: i, Message: msg,
			Status: st.ErrStatus.Message, Reason: st.ErrStatus.Reason, Code: st.ErrStatus.Code})
	}
	for _, w := range warnings.texts {
		out = append(out, Result{Action: Warn, Policy: policy, Binding: binding, Index: i, Message: w})
	}
	audits, err := auditFailures(attr)
	if err != nil {
		return nil, err
	}
	for _, a := range audits {
		out = append(out, Result{Action: Audit, Policy: policy, Binding: binding, Index: i, Message: a})
	}
	return out, nil
}

// annotated keeps the audit annotations the dispatcher adds (the API
// server's record does not export them).
type annotated struct {
	admission.Attributes
	annotations map[string]string
}

func (a *annotated) AddAnnotation(key, value string) error {
	if a.annotations == nil {
		a.annotations = map[string]string{}
	}
	a.annotations[key] = value
	return nil
}

func (a *annotated) AddAnnotationWithLevel(key, value string, _ auditinternal.Level) error {
	return a.AddAnnotation(key, value)
}

func auditFailures(attr *annotated) ([]string, error) {
	raw := attr.annotations[failureAnnotation]
	if raw == "" {
		return nil, nil
	}
	var vals []validating.ValidationFailureValue
	if err := json.Unmarshal([]byte(raw), &vals); err != nil {
		return nil, fmt.Errorf("read audit annotation %s: %w", failureAnnotation, err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = v.Message
	}
	return out, nil
}

// swallowed returns, as Ignored results, what the strict twin of an Ignore
// policy reported and the policy itself did not: errors failurePolicy
// Ignore hid.
func swallowed(got, strict []Result) []Result {
	seen := map[Action]map[string]bool{}
	for _, r := range got {
		if seen[r.Action] == nil {
			seen[r.Action] = map[string]bool{}
		}
		seen[r.Action][r.Message] = true
	}
	var out []Result
	for _, r := range strict {
		if seen[r.Action][r.Message] {
			continue
		}
		r.Message = "error ignored under failurePolicy Ignore: " + r.Message
		r.Action, r.Status, r.Reason, r.Code = Ignored, "", "", 0
		out = append(out, r)
	}
	return out
}

func hasNoVerdict(rs []Result) bool {
	for _, r := range rs {
		if r.Action == NoVerdict {
			return true
		}
	}
	return false
}

// unbound reports bindings that matched no object in the render.
func (e *evaluator) unbound() []Result {
	var out []Result
	for _, h := range e.hooks {
		if !h.matched {
			out = append(out, Result{Action: Unbound, Policy: h.policy.Name, Binding: h.binding.Name, Index: -1,
				Message: fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' matches no object in the render: it checks nothing", h.policy.Name, h.binding.Name)})
		}
	}
	return out
}

type warningRecorder struct{ texts []string }

func (w *warningRecorder) AddWarning(_, text string) { w.texts = append(w.texts, text) }

// noVerdictAuthorizer answers no authorizer check: offline the gate cannot
// know what the user who applies may do. Being asked makes the result
// NoVerdict, never a silent allow or deny.
type noVerdictAuthorizer struct {
	asked bool
	what  string
}

func (a *noVerdictAuthorizer) Authorize(_ context.Context, attr authorizer.Attributes) (authorizer.Decision, string, error) {
	a.asked = true
	if a.what == "" {
		a.what = fmt.Sprintf("%s %s/%s", attr.GetVerb(), attr.GetAPIGroup(), attr.GetResource())
	}
	return authorizer.DecisionNoOpinion, "", errors.New("the gate has no authorizer")
}

// builtinEquivalent is the no-verdict result for a built-in object that a
// policy matches only in another version of its group and resource: under
// matchPolicy Equivalent (the default) the API server converts the object
// to that version and evaluates it, which needs Kubernetes' internal
// conversions the gate does not have. Never a silent allow: the object is
// tried as that version through the real matcher (selectors and all), and
// when it would match, the result is no verdict.
func (e *evaluator) builtinEquivalent(h *hook, u *unstructured.Unstructured, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, ns string, i int) (Result, bool) {
	mc := h.policy.Spec.MatchConstraints
	if mc == nil || !builtinGroup(gvk.Group) || e.kinds.crds[gvk.GroupKind()].plural != "" {
		return Result{}, false
	}
	if mc.MatchPolicy != nil && *mc.MatchPolicy == admissionv1.Exact {
		return Result{}, false
	}
	for _, rule := range mc.ResourceRules {
		if !anyOf(rule.APIGroups, gvk.Group) || !anyOf(rule.Resources, gvr.Resource) || anyOf(rule.APIVersions, gvk.Version) {
			continue
		}
		for _, v := range rule.APIVersions {
			other, otherR := gvk, gvr
			other.Version, otherR.Version = v, v
			cp := u.DeepCopy()
			cp.SetAPIVersion(other.GroupVersion().String())
			if ok, _, err := e.matches(newAttributes(cp, other, otherR, ns), h); err != nil || !ok {
				continue
			}
			return Result{Action: NoVerdict, Policy: h.policy.Name, Binding: h.binding.Name, Index: i,
				Message: fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' matches %s in %s (matchPolicy Equivalent): the API server converts %s %q to that version and evaluates it; the gate cannot convert built-in kinds between versions (set matchPolicy: Exact, or name %s in the rule)",
					h.policy.Name, h.binding.Name, gvr.Resource, other.GroupVersion(), gvk.GroupVersion(), u.GetName(), gvk.GroupVersion())}, true
		}
	}
	return Result{}, false
}

// anyOf reports whether a rule's list holds v or "*".
func anyOf(list []string, v string) bool {
	return slices.Contains(list, v) || slices.Contains(list, "*")
}
