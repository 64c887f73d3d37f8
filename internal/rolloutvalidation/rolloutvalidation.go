package rolloutvalidation

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/validation"
	analysisutil "github.com/argoproj/argo-rollouts/utils/analysis"
	ingressutil "github.com/argoproj/argo-rollouts/utils/ingress"
	istioutil "github.com/argoproj/argo-rollouts/utils/istio"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/capabilities"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/apivalidation"
)

// Version is the Argo Rollouts release whose validation this package runs:
// the github.com/argoproj/argo-rollouts module of go.mod (a test keeps the
// two equal).
const Version = "v1.10.1"

// API groups of the objects a Rollout references.
const (
	groupRollouts = "argoproj.io"
	groupApps     = "apps"
	groupCore     = ""
)

// Lookup finds an applied object of the render by API group, kind,
// namespace and name (namespace "" for a ClusterAnalysisTemplate), or nil.
type Lookup = func(group, kind, namespace, name string) *yaml.RNode

// Validate is what the Argo Rollouts controller's validation says about a
// Rollout of the render, as rollout/controller.go newRolloutContext runs
// it: the Rollout decoded as its informer decodes it, its workloadRef
// resolved from the render, then ValidateRollout, the nginx, ALB and Istio
// configuration checks and ValidateRolloutReferencedResources on the
// objects of the render it names. The controller stops at the first error;
// Validate returns them all, as `kubectl argo rollouts lint` prints them.
// An error means the Rollout could not be validated.
func Validate(obj *yaml.RNode, lookup Lookup) (field.ErrorList, error) {
	ro, err := prepare(obj, lookup)
	if err != nil {
		return nil, err
	}
	return ControllerErrors(ro, referencedResources(lookup, ro))
}

// prepare is the Rollout as the controller validates it: decoded, its
// workloadRef resolved. ValidateRolloutSpec defaults a copy of the pod
// template before it validates it; the template's containers are given
// here the pull policies that defaulting gives them, so that it skips
// parsing each container's image (a regular expression per container, of
// images a render repeats thousands of times).
func prepare(obj *yaml.RNode, lookup Lookup) (*v1alpha1.Rollout, error) {
	ro := &v1alpha1.Rollout{}
	if err := decodeJSON(obj, ro); err != nil {
		return nil, fmt.Errorf("reading the Rollout as the controller does: %w", err)
	}
	if err := resolveWorkloadRef(lookup, ro); err != nil {
		return nil, fmt.Errorf("resolving spec.workloadRef: %w", err)
	}
	apivalidation.DefaultPodSpecPullPolicies(&ro.Spec.Template.Spec)
	return ro, nil
}

// apiGroup returns the group of an apiVersion: "apps/v1" → "apps", "v1" → "".
func apiGroup(apiVersion string) string {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return groupCore
}

// workloadKinds are the kinds a workloadRef may name, with the path of their
// pod template (rollout/templateref.go infoByGroupKind).
var workloadKinds = map[[2]string]string{
	{groupApps, "Deployment"}:  "spec.template",
	{groupApps, "ReplicaSet"}:  "spec.template",
	{groupCore, "PodTemplate"}: "template",
}

// ControllerErrors is what the controller's validation says about a
// decoded Rollout (its workloadRef already resolved) and the objects it
// references: ValidateRollout, the nginx, ALB and Istio configuration
// checks, then ValidateRolloutReferencedResources.
func ControllerErrors(ro *v1alpha1.Rollout, refs validation.ReferencedResources) (errs field.ErrorList, err error) {
	defer func() {
		// The validators index into the spec; a panic on a shape the CRD
		// schema would refuse is a verdict the gate could not reach.
		if p := recover(); p != nil {
			errs, err = nil, fmt.Errorf("the Argo Rollouts %s validation failed on this Rollout: %v", Version, p)
		}
	}()
	// ValidateRollout initialises Kubernetes' process-wide capabilities
	// with AllowPrivileged, as the controller runs; they are set once, and
	// another validator of the same process (api-validation) may have set
	// them first without it. Those two answers differ only by these
	// "disallowed by cluster policy" errors, which the controller never
	// gives: drop them.
	errs = withoutPrivilegePolicy(validation.ValidateRollout(ro))
	for _, check := range []func(*v1alpha1.Rollout) error{
		validation.ValidateRolloutNginxIngressesConfig,
		validation.ValidateRolloutAlbIngressesConfig,
		validation.ValidateRolloutVirtualServicesConfig,
	} {
		if e := check(ro); e != nil {
			fe, ok := e.(*field.Error)
			if !ok {
				fe = field.InternalError(field.NewPath("spec", "strategy"), e)
			}
			errs = append(errs, fe)
		}
	}
	return append(errs, validation.ValidateRolloutReferencedResources(ro, refs)...), nil
}

func withoutPrivilegePolicy(errs field.ErrorList) field.ErrorList {
	if capabilities.Get().AllowPrivileged {
		return errs
	}
	var out field.ErrorList
	for _, e := range errs {
		if e.Type == field.ErrorTypeForbidden && strings.HasSuffix(e.Detail, "disallowed by cluster policy") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// decodeJSON decodes an object as the controller's informers do: JSON,
// case-sensitive, unknown fields dropped (the schema rules report those).
// decodeNode gives the same result from the node tree directly; what it
// declines takes the JSON path, from a zero value again.
func decodeJSON(obj *yaml.RNode, out any) error {
	if decodeNode(obj.YNode(), out) == nil {
		return nil
	}
	reflect.ValueOf(out).Elem().SetZero()
	return decodeViaJSON(obj, out)
}

// decodeViaJSON is decodeJSON's path through JSON: the node decoded by
// go-yaml, printed as JSON and read back.
func decodeViaJSON(obj *yaml.RNode, out any) error {
	body, err := jsonOf(obj)
	if err != nil {
		return fmt.Errorf("encoding %s/%s as JSON: %w", obj.GetKind(), obj.GetName(), err)
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(body, out); err != nil {
		return fmt.Errorf("decoding %s/%s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// jsonOf is the object as JSON: what kyaml's RNode.MarshalJSON writes,
// decoded from the parsed node itself rather than printed as YAML and
// parsed again.
func jsonOf(obj *yaml.RNode) ([]byte, error) {
	if obj.YNode() == nil {
		return []byte("null"), nil
	}
	m := map[string]any{}
	if err := obj.YNode().Decode(&m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// workloadSelectors are the selector paths of the kinds a workloadRef may
// name (rollout/templateref.go infoByGroupKind); a PodTemplate has none.
var workloadSelectors = map[[2]string]string{
	{groupApps, "Deployment"}: "spec.selector",
	{groupApps, "ReplicaSet"}: "spec.selector",
}

// resolveWorkloadRef copies the pod template (and the selector, when the
// Rollout has none) of the workload a workloadRef names into the Rollout,
// as the controller's template resolver does before validating
// (rollout/templateref.go Resolve). A Rollout with a template of its own, a
// kind the controller does not support or a target missing from the render
// is left as it is: ValidateRollout then validates it as lint does, and
// rollout-workload-ref reports the reference.
func resolveWorkloadRef(lookup Lookup, ro *v1alpha1.Rollout) error {
	ref := ro.Spec.WorkloadRef
	if ref == nil || !ro.Spec.EmptyTemplate() {
		return nil
	}
	group := apiGroup(ref.APIVersion)
	path, known := workloadKinds[[2]string{group, ref.Kind}]
	target := lookup(group, ref.Kind, ro.Namespace, ref.Name)
	if !known || target == nil {
		return nil
	}
	var tpl corev1.PodTemplateSpec
	if err := decodeSub(target, path, &tpl); err != nil {
		return err
	}
	ro.Spec.SetResolvedTemplate(tpl)
	if sel, ok := workloadSelectors[[2]string{group, ref.Kind}]; ok && ro.Spec.Selector == nil {
		var s metav1.LabelSelector
		if err := decodeSub(target, sel, &s); err != nil {
			return err
		}
		ro.Spec.SetResolvedSelector(&s)
	}
	return nil
}

// decodeSub decodes the node at a dotted path of obj (absent: zero value).
func decodeSub(obj *yaml.RNode, path string, out any) error {
	n, err := obj.Pipe(yaml.Lookup(strings.Split(path, ".")...))
	if err != nil || n == nil {
		return err
	}
	if err := decodeJSON(n, out); err != nil {
		return fmt.Errorf("reading %s of %s/%s: %w", path, obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// referencedResources gathers from the render what the controller fetches
// for validation (rollout/controller.go getRolloutReferencedResources):
// the strategy's Services, the AnalysisTemplates of each analysis with
// their nested templates, the nginx and ALB Ingresses and the Istio
// VirtualServices. What is missing from the render is left out: other rules
// report it, and an analysis with a missing template is left out whole, as
// the controller stops there.
func referencedResources(lookup Lookup, ro *v1alpha1.Rollout) validation.ReferencedResources {
	var refs validation.ReferencedResources
	ns := ro.Namespace
	addService := func(name string, typ validation.ServiceType) {
		if name == "" {
			return
		}
		obj := lookup(groupCore, "Service", ns, name)
		var svc corev1.Service
		if obj == nil || decodeJSON(obj, &svc) != nil {
			return
		}
		refs.ServiceWithType = append(refs.ServiceWithType, validation.ServiceWithType{Service: &svc, Type: typ})
	}
	addAnalysis := func(a *v1alpha1.RolloutAnalysis, typ validation.AnalysisTemplateType, step int) {
		if a == nil {
			return
		}
		tpls, ctpls, ok := analysisTemplates(lookup, ns, a.Templates, 0)
		if !ok {
			return
		}
		tpls, ctpls = analysisutil.FilterUniqueTemplates(tpls, ctpls)
		refs.AnalysisTemplatesWithType = append(refs.AnalysisTemplatesWithType, validation.AnalysisTemplatesWithType{
			AnalysisTemplates: tpls, ClusterAnalysisTemplates: ctpls, TemplateType: typ, CanaryStepIndex: step, Args: a.Args,
		})
	}
	switch s := ro.Spec.Strategy; {
	case s.BlueGreen != nil:
		addService(s.BlueGreen.ActiveService, validation.ActiveService)
		addService(s.BlueGreen.PreviewService, validation.PreviewService)
		addAnalysis(s.BlueGreen.PrePromotionAnalysis, validation.PrePromotionAnalysis, 0)
		addAnalysis(s.BlueGreen.PostPromotionAnalysis, validation.PostPromotionAnalysis, 0)
	case s.Canary != nil:
		addService(s.Canary.StableService, validation.StableService)
		addService(s.Canary.CanaryService, validation.CanaryService)
		if pp := s.Canary.PingPong; pp != nil {
			addService(pp.PingService, validation.PingService)
			addService(pp.PongService, validation.PongService)
		}
		for i, step := range s.Canary.Steps {
			addAnalysis(step.Analysis, validation.InlineAnalysis, i)
		}
		if s.Canary.Analysis != nil {
			addAnalysis(&s.Canary.Analysis.RolloutAnalysis, validation.BackgroundAnalysis, 0)
		}
		if tr := s.Canary.TrafficRouting; tr != nil {
			refs.Ingresses = ingresses(lookup, ns, tr)
			refs.VirtualServices = virtualServices(lookup, ns, tr)
		}
	}
	return refs
}

// maxTemplateDepth bounds nested spec.templates (a template naming itself).
const maxTemplateDepth = 16

// analysisTemplates resolves template references as the controller does
// (getReferencedAnalysisTemplatesFromRef), nested templates included. ok is
// false when one is missing from the render or cannot be decoded.
func analysisTemplates(lookup Lookup, ns string, refs []v1alpha1.AnalysisTemplateRef, depth int) (tpls []*v1alpha1.AnalysisTemplate, ctpls []*v1alpha1.ClusterAnalysisTemplate, ok bool) {
	if depth > maxTemplateDepth {
		return nil, nil, false
	}
	for _, ref := range refs {
		var nested []v1alpha1.AnalysisTemplateRef
		if ref.IsClusterScope() {
			obj := lookup(groupRollouts, "ClusterAnalysisTemplate", "", ref.TemplateName)
			t := &v1alpha1.ClusterAnalysisTemplate{}
			if obj == nil || decodeJSON(obj, t) != nil {
				return nil, nil, false
			}
			ctpls, nested = append(ctpls, t), t.Spec.Templates
		} else {
			obj := lookup(groupRollouts, "AnalysisTemplate", ns, ref.TemplateName)
			t := &v1alpha1.AnalysisTemplate{}
			if obj == nil || decodeJSON(obj, t) != nil {
				return nil, nil, false
			}
			tpls, nested = append(tpls, t), t.Spec.Templates
		}
		if len(nested) > 0 {
			it, ict, ok := analysisTemplates(lookup, ns, nested, depth+1)
			if !ok {
				return nil, nil, false
			}
			tpls, ctpls = append(tpls, it...), append(ctpls, ict...)
		}
	}
	return tpls, ctpls, true
}

// ingresses returns the nginx stable and ALB Ingresses of the render the
// traffic routing names (rollout/controller.go getReferencedIngresses).
func ingresses(lookup Lookup, ns string, tr *v1alpha1.RolloutTrafficRouting) []ingressutil.Ingress {
	var names []string
	if n := tr.Nginx; n != nil {
		names = append(append(names, n.StableIngress), n.StableIngresses...)
	}
	if a := tr.ALB; a != nil {
		names = append(append(names, a.Ingress), a.Ingresses...)
	}
	var out []ingressutil.Ingress
	for _, name := range names {
		if name == "" {
			continue
		}
		if obj := lookup("networking.k8s.io", "Ingress", ns, name); obj != nil {
			var ing networkingv1.Ingress
			if decodeJSON(obj, &ing) == nil {
				out = append(out, *ingressutil.NewIngress(&ing))
			}
		} else if obj := lookup("extensions", "Ingress", ns, name); obj != nil {
			var ing extensionsv1beta1.Ingress
			if decodeJSON(obj, &ing) == nil {
				out = append(out, *ingressutil.NewLegacyIngress(&ing))
			}
		}
	}
	return out
}

// virtualServices returns the Istio VirtualServices of the render the
// traffic routing names, "name" or "name.namespace"
// (trafficrouting/istio GetReferencedVirtualServices).
func virtualServices(lookup Lookup, ns string, tr *v1alpha1.RolloutTrafficRouting) []unstructured.Unstructured {
	if tr.Istio == nil {
		return nil
	}
	refs := tr.Istio.VirtualServices
	if tr.Istio.VirtualService != nil {
		refs = append([]v1alpha1.IstioVirtualService{*tr.Istio.VirtualService}, refs...)
	}
	var out []unstructured.Unstructured
	for _, ref := range refs {
		vns, name := istioutil.GetVirtualServiceNamespaceName(ref.Name)
		if vns == "" {
			vns = ns
		}
		obj := lookup("networking.istio.io", "VirtualService", vns, name)
		var u map[string]any
		if obj == nil || decodeJSON(obj, &u) != nil {
			continue
		}
		out = append(out, unstructured.Unstructured{Object: u})
	}
	return out
}
