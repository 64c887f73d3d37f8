package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// nsNameLabel is the label the API server puts on every Namespace.
const nsNameLabel = "kubernetes.io/metadata.name"

// namespaces is what the gate knows about Namespaces: the render's, and
// labels given by the caller (which win).
type namespaces struct {
	idx    cache.Indexer
	lister listersv1.NamespaceLister
	known  map[string]bool
}

func newNamespaces(render []*unstructured.Unstructured, given map[string]map[string]string) (*namespaces, error) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	byName := map[string]*corev1.Namespace{}
	for _, u := range render {
		if u.GetAPIVersion() != "v1" || u.GetKind() != "Namespace" {
			continue
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Labels: u.GetLabels(), Annotations: u.GetAnnotations()}}
		byName[ns.Name] = ns
	}
	for name, labels := range given {
		ns := byName[name]
		if ns == nil {
			ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
			byName[name] = ns
		}
		ns.Labels = map[string]string{}
		for k, v := range labels {
			ns.Labels[k] = v
		}
	}
	known := map[string]bool{}
	for name, ns := range byName {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[nsNameLabel] = name
		ns.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}
		if err := idx.Add(ns); err != nil {
			return nil, fmt.Errorf("index namespace %q: %w", name, err)
		}
		known[name] = true
	}
	return &namespaces{idx: idx, lister: listersv1.NewNamespaceLister(idx), known: known}, nil
}

// stand adds a stand-in for a Namespace the gate does not know, holding only
// the name label the API server sets, so that a policy that does not look at
// the namespace can be evaluated. The evaluator makes sure beforehand that
// no namespaceSelector or namespaceObject depends on it.
func (n *namespaces) stand(name string) error {
	if _, exists, _ := n.idx.GetByKey(name); exists {
		return nil
	}
	ns := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{nsNameLabel: name}},
	}
	if err := n.idx.Add(ns); err != nil {
		return fmt.Errorf("index namespace %q: %w", name, err)
	}
	return nil
}

// errUnknownNamespace is what the matcher's "direct read" sees for a
// Namespace the gate does not know; the evaluator checks before dispatch
// that nothing depends on it, so this only guards against surprises.
var errUnknownNamespace = errors.New("namespace is not in the render nor in --namespace-labels")

// nsClient stands in for the API server's direct Namespace read, the only
// client call the policy matcher makes. The gate has no cluster: a
// Namespace it does not know is an error, never an empty label set.
type nsClient struct{ kubernetes.Interface }

func (nsClient) CoreV1() typedcorev1.CoreV1Interface { return nsCore{} }

type nsCore struct{ typedcorev1.CoreV1Interface }

func (nsCore) Namespaces() typedcorev1.NamespaceInterface { return nsGetter{} }

type nsGetter struct{ typedcorev1.NamespaceInterface }

func (nsGetter) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Namespace, error) {
	return nil, apierrors.NewInternalError(fmt.Errorf("namespace %q: %w", name, errUnknownNamespace))
}

// paramInformer serves a policy's parameter objects from memory through the
// informer interface generic.CollectParams reads.
type paramInformer struct {
	lister cache.GenericLister
}

var _ informers.GenericInformer = paramInformer{}

func (p paramInformer) Informer() cache.SharedIndexInformer { return syncedInformer{} }
func (p paramInformer) Lister() cache.GenericLister         { return p.lister }

// syncedInformer answers HasSynced, the only informer call CollectParams
// makes: the in-memory store is complete from the start.
type syncedInformer struct{ cache.SharedIndexInformer }

func (syncedInformer) HasSynced() bool { return true }

func newParamInformer(gr schema.GroupResource, objs []*unstructured.Unstructured) (paramInformer, error) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			return paramInformer{}, fmt.Errorf("index parameter %s %q: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return paramInformer{lister: cache.NewGenericLister(idx, gr)}, nil
}

// kinds maps kinds to resources and scopes: built-in kinds from a table,
// custom kinds from the CRDs in the render or the policy files.
type kinds struct {
	crds map[schema.GroupKind]crdInfo
}

type crdInfo struct {
	plural     string
	namespaced bool
	// served lists the served versions.
	served []string
	// webhookConversion: spec.conversion.strategy is Webhook.
	webhookConversion bool
}

func newKinds(crds []*unstructured.Unstructured) kinds {
	k := kinds{crds: map[schema.GroupKind]crdInfo{}}
	for _, c := range crds {
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(c.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(c.Object, "spec", "names", "plural")
		scope, _, _ := unstructured.NestedString(c.Object, "spec", "scope")
		strategy, _, _ := unstructured.NestedString(c.Object, "spec", "conversion", "strategy")
		info := crdInfo{plural: plural, namespaced: scope != "Cluster", webhookConversion: strategy == "Webhook"}
		versions, _, _ := unstructured.NestedSlice(c.Object, "spec", "versions")
		for _, v := range versions {
			m, _ := v.(map[string]any)
			name, _ := m["name"].(string)
			if served, _ := m["served"].(bool); served && name != "" {
				info.served = append(info.served, name)
			}
		}
		k.crds[schema.GroupKind{Group: group, Kind: kind}] = info
	}
	return k
}

// served tells whether gvk is a served version of a CRD the gate knows.
func (k kinds) served(gvk schema.GroupVersionKind) bool {
	c, ok := k.crds[gvk.GroupKind()]
	return ok && slices.Contains(c.served, gvk.Version)
}

// mapping returns the resource and whether it is namespaced; known is false
// for a custom kind without a CRD (the resource is then guessed).
func (k kinds) mapping(gvk schema.GroupVersionKind) (gvr schema.GroupVersionResource, namespaced, known bool) {
	if c, ok := k.crds[gvk.GroupKind()]; ok {
		return gvk.GroupVersion().WithResource(c.plural), c.namespaced, true
	}
	gvr, _ = meta.UnsafeGuessKindToResource(gvk)
	if r, ok := irregularResources[gvk.Kind]; ok && builtinGroup(gvk.Group) {
		gvr.Resource = r
	}
	_, builtin := clusterScoped[gvk.GroupKind()]
	if builtin {
		return gvr, false, true
	}
	return gvr, true, builtinGroup(gvk.Group)
}

// scope returns the REST scope of a kind for parameter look-ups.
func (k kinds) scope(gvk schema.GroupVersionKind) (gvr schema.GroupVersionResource, scope meta.RESTScope, err error) {
	gvr, namespaced, known := k.mapping(gvk)
	if !known {
		// The API server's own message for a paramKind it cannot map.
		return gvr, nil, fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gvk)
	}
	if namespaced {
		return gvr, meta.RESTScopeNamespace, nil
	}
	return gvr, meta.RESTScopeRoot, nil
}

// builtinGroup tells the API groups Kubernetes itself serves.
func builtinGroup(g string) bool {
	return g == "" || !strings.Contains(g, ".") || strings.HasSuffix(g, ".k8s.io")
}

// irregularResources are built-in kinds whose resource name is not the
// guessed plural.
var irregularResources = map[string]string{"Endpoints": "endpoints"}

// clusterScoped lists the built-in cluster-scoped kinds of Kubernetes 1.37.
var clusterScoped = map[schema.GroupKind]struct{}{
	{Kind: "Namespace"}: {}, {Kind: "Node"}: {}, {Kind: "PersistentVolume"}: {}, {Kind: "ComponentStatus"}: {},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                       {},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                {},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:               {},
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                 {},
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                    {},
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                      {},
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                             {},
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:                        {},
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                             {},
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                    {},
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                              {},
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                 {},
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                               {},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: {},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   {},
	{Group: "admissionregistration.k8s.io", Kind: kindPolicy}:                       {},
	{Group: "admissionregistration.k8s.io", Kind: kindBinding}:                      {},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:        {},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}: {},
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                           {},
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:               {},
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                      {},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                     {},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:     {},
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                 {},
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                               {},
}
