package policy

import (
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	admissionGroup  = "admissionregistration.k8s.io"
	kindPolicy      = "ValidatingAdmissionPolicy"
	kindBinding     = "ValidatingAdmissionPolicyBinding"
	kindCRD         = "CustomResourceDefinition"
	apiextensionsGV = "apiextensions.k8s.io/v1"
)

// ConfigError is a policy source the gate cannot use: a file that holds
// something else than a policy, binding, parameter or CRD, an unsupported
// version, or a field the API would reject. Callers map it to exit 2.
type ConfigError struct {
	Source string // file or "render"
	Err    error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("policy source %s: %v", e.Source, e.Err) }
func (e *ConfigError) Unwrap() error { return e.Err }

// Source is one file (or the render) of policy documents.
type Source struct {
	// Name is shown in errors: a path, or "render".
	Name string
	// Docs are the file's objects.
	Docs []*yaml.RNode
}

// Set is a loaded, defaulted collection of policies, bindings, parameter
// objects and the CRDs that describe custom parameter kinds.
type Set struct {
	Policies []*admissionv1.ValidatingAdmissionPolicy
	Bindings []*admissionv1.ValidatingAdmissionPolicyBinding
	// Params are objects of any policy's paramKind (also taken from the
	// render at evaluation time).
	Params []*unstructured.Unstructured
	// CRDs are CustomResourceDefinitions given with the policies.
	CRDs []*unstructured.Unstructured
}

// Load decodes policy files. Every document must be a
// ValidatingAdmissionPolicy, a ValidatingAdmissionPolicyBinding (both
// admissionregistration.k8s.io/v1), a CustomResourceDefinition, or an object
// of some policy's paramKind; anything else is a *ConfigError, as are
// unknown fields. Policies and bindings get the API server's defaults
// (failurePolicy Fail, matchPolicy Equivalent, empty selectors).
func Load(sources ...Source) (*Set, error) {
	s := &Set{}
	var others []pending
	for _, src := range sources {
		for _, doc := range src.Docs {
			u, err := toUnstructured(doc)
			if err != nil {
				return nil, &ConfigError{Source: src.Name, Err: err}
			}
			isOther, err := s.add(u)
			if err != nil {
				return nil, &ConfigError{Source: src.Name, Err: err}
			}
			if isOther {
				others = append(others, pending{src.Name, u})
			}
		}
	}
	kinds := s.paramKinds()
	for _, o := range others {
		if !kinds[o.obj.GroupVersionKind()] {
			return nil, &ConfigError{Source: o.source, Err: fmt.Errorf(
				"%s %s %q is not a ValidatingAdmissionPolicy, a binding, a CustomResourceDefinition or the paramKind of a policy",
				o.obj.GetAPIVersion(), o.obj.GetKind(), o.obj.GetName())}
		}
		s.Params = append(s.Params, o.obj)
	}
	return s, nil
}

type pending struct {
	source string
	obj    *unstructured.Unstructured
}

// FromRender collects the policies and bindings a render declares; other
// objects are left to serve as parameters. A malformed policy or binding in
// the render is a *ConfigError.
func FromRender(objs []*unstructured.Unstructured) (*Set, error) {
	s := &Set{}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		if gvk.Group != admissionGroup || (gvk.Kind != kindPolicy && gvk.Kind != kindBinding) {
			continue
		}
		if _, err := s.add(u); err != nil {
			return nil, &ConfigError{Source: "render", Err: err}
		}
	}
	return s, nil
}

// Merge returns a set holding both sets' contents.
func (s *Set) Merge(o *Set) *Set {
	if o == nil {
		return s
	}
	return &Set{
		Policies: append(append([]*admissionv1.ValidatingAdmissionPolicy{}, s.Policies...), o.Policies...),
		Bindings: append(append([]*admissionv1.ValidatingAdmissionPolicyBinding{}, s.Bindings...), o.Bindings...),
		Params:   append(append([]*unstructured.Unstructured{}, s.Params...), o.Params...),
		CRDs:     append(append([]*unstructured.Unstructured{}, s.CRDs...), o.CRDs...),
	}
}

// add files u; it reports whether u is some other object (a parameter
// candidate).
func (s *Set) add(u *unstructured.Unstructured) (other bool, err error) {
	gvk := u.GroupVersionKind()
	switch {
	case gvk.Group == admissionGroup && (gvk.Kind == kindPolicy || gvk.Kind == kindBinding) && gvk.Version != "v1":
		return false, fmt.Errorf("%s %q: only admissionregistration.k8s.io/v1 is supported, not %s", gvk.Kind, u.GetName(), u.GetAPIVersion())
	case gvk.Group == admissionGroup && gvk.Kind == kindPolicy:
		p := &admissionv1.ValidatingAdmissionPolicy{}
		if err := decodeStrict(u, p); err != nil {
			return false, err
		}
		if err := validatePolicy(p); err != nil {
			return false, err
		}
		defaultPolicy(p)
		s.Policies = append(s.Policies, p)
	case gvk.Group == admissionGroup && gvk.Kind == kindBinding:
		b := &admissionv1.ValidatingAdmissionPolicyBinding{}
		if err := decodeStrict(u, b); err != nil {
			return false, err
		}
		if err := validateBinding(b); err != nil {
			return false, err
		}
		defaultBinding(b)
		s.Bindings = append(s.Bindings, b)
	case u.GetAPIVersion() == apiextensionsGV && gvk.Kind == kindCRD:
		if err := checkCRD(u); err != nil {
			return false, err
		}
		s.CRDs = append(s.CRDs, u)
	default:
		return true, nil
	}
	return false, nil
}

// paramKinds lists every policy's paramKind.
func (s *Set) paramKinds() map[schema.GroupVersionKind]bool {
	out := map[schema.GroupVersionKind]bool{}
	for _, p := range s.Policies {
		if gvk, ok := paramGVK(p); ok {
			out[gvk] = true
		}
	}
	return out
}

func paramGVK(p *admissionv1.ValidatingAdmissionPolicy) (schema.GroupVersionKind, bool) {
	pk := p.Spec.ParamKind
	if pk == nil {
		return schema.GroupVersionKind{}, false
	}
	gv, err := schema.ParseGroupVersion(pk.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}, false
	}
	return gv.WithKind(pk.Kind), true
}

func decodeStrict(u *unstructured.Unstructured, into runtime.Object) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
		return fmt.Errorf("decode %s %q: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// toUnstructured converts a YAML document as the API server would read its
// JSON: integers stay int64, and the object must have apiVersion and kind.
func toUnstructured(doc *yaml.RNode) (*unstructured.Unstructured, error) {
	if obj, ok := fastUnstructured(doc.YNode()); ok {
		if m, ok := obj.(map[string]any); ok {
			u := &unstructured.Unstructured{Object: m}
			if u.GetKind() == "" || u.GetAPIVersion() == "" {
				return nil, errors.New("decode object: apiVersion and kind are required")
			}
			return u, nil
		}
	}
	return roundTrip(doc)
}

// roundTrip is toUnstructured by way of JSON, as kubectl sends an object.
// Its errors never quote the document (yamlerr.go).
func roundTrip(doc *yaml.RNode) (*unstructured.Unstructured, error) {
	if doc.YNode().Kind != yaml.MappingNode {
		return nil, notAnObject(doc)
	}
	data, err := doc.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("convert document to JSON: %w", contentFreeYAMLError(err))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, errors.New("decode object: not a Kubernetes object (apiVersion, kind and metadata must be present and well-formed)")
	}
	if u.GetKind() == "" || u.GetAPIVersion() == "" {
		return nil, errors.New("decode object: apiVersion and kind are required")
	}
	return u, nil
}

// defaultPolicy applies the API server's defaults for
// admissionregistration.k8s.io/v1 policies.
func defaultPolicy(p *admissionv1.ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		fail := admissionv1.Fail
		p.Spec.FailurePolicy = &fail
	}
	if p.Spec.MatchConstraints != nil {
		defaultMatch(p.Spec.MatchConstraints)
	}
}

func defaultBinding(b *admissionv1.ValidatingAdmissionPolicyBinding) {
	if b.Spec.MatchResources != nil {
		defaultMatch(b.Spec.MatchResources)
	}
}

func defaultMatch(m *admissionv1.MatchResources) {
	if m.MatchPolicy == nil {
		eq := admissionv1.Equivalent
		m.MatchPolicy = &eq
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
}

// validatePolicy rejects what the API server would refuse to store, so a
// policy the cluster would never run does not pass the gate either.
func validatePolicy(p *admissionv1.ValidatingAdmissionPolicy) error {
	switch {
	case p.Name == "":
		return errors.New("ValidatingAdmissionPolicy without metadata.name")
	case p.Spec.MatchConstraints == nil || len(p.Spec.MatchConstraints.ResourceRules) == 0:
		return fmt.Errorf("ValidatingAdmissionPolicy %q: spec.matchConstraints.resourceRules is required", p.Name)
	case len(p.Spec.Validations) == 0 && len(p.Spec.AuditAnnotations) == 0:
		return fmt.Errorf("ValidatingAdmissionPolicy %q: spec.validations or spec.auditAnnotations is required", p.Name)
	}
	if _, ok := paramGVK(p); p.Spec.ParamKind != nil && !ok {
		return fmt.Errorf("ValidatingAdmissionPolicy %q: spec.paramKind.apiVersion %q does not parse", p.Name, p.Spec.ParamKind.APIVersion)
	}
	if err := compileErrors(p); err != nil {
		return fmt.Errorf("ValidatingAdmissionPolicy %q: %w", p.Name, err)
	}
	return nil
}

func validateBinding(b *admissionv1.ValidatingAdmissionPolicyBinding) error {
	switch {
	case b.Name == "":
		return errors.New("ValidatingAdmissionPolicyBinding without metadata.name")
	case b.Spec.PolicyName == "":
		return fmt.Errorf("ValidatingAdmissionPolicyBinding %q: spec.policyName is required", b.Name)
	case len(b.Spec.ValidationActions) == 0:
		return fmt.Errorf("ValidatingAdmissionPolicyBinding %q: spec.validationActions is required", b.Name)
	}
	for _, a := range b.Spec.ValidationActions {
		if a != admissionv1.Deny && a != admissionv1.Warn && a != admissionv1.Audit {
			return fmt.Errorf("ValidatingAdmissionPolicyBinding %q: unknown validationAction %q (Deny, Warn, Audit)", b.Name, a)
		}
	}
	if r := b.Spec.ParamRef; r != nil && r.ParameterNotFoundAction == nil {
		return fmt.Errorf("ValidatingAdmissionPolicyBinding %q: spec.paramRef.parameterNotFoundAction is required", b.Name)
	}
	return nil
}
