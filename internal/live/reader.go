package live

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Reader is what `status` needs of a cluster: read one object, list the
// objects of a kind in a namespace. Errors keep the API server's status, so
// callers can tell not-found, forbidden and unreachable apart
// (apierrors.IsNotFound, IsForbidden; meta.IsNoMatchError for a kind the
// server does not serve).
type Reader interface {
	Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
	List(ctx context.Context, gvk schema.GroupVersionKind, namespace string) ([]unstructured.Unstructured, error)
}

// Well-known kinds, mapped without discovery.
var (
	ApplicationGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}
	podGVK         = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	known          = map[schema.GroupVersionKind]schema.GroupVersionResource{
		ApplicationGVK: {Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"},
		podGVK:         {Version: "v1", Resource: "pods"},
	}
)

// KubeReader reads through client-go's dynamic client; kinds are mapped to
// resources with discovery, fetched once and only when a kind other than
// Application or Pod is read.
type KubeReader struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

// DefaultRequestTimeout bounds each request when the config sets no
// timeout of its own.
const DefaultRequestTimeout = 10 * time.Second

// NewKubeReader returns a Reader for cfg. cfg.Timeout (DefaultRequestTimeout
// when 0) bounds each HTTP request, discovery included; callers bound the
// whole run with ctx.
func NewKubeReader(cfg *rest.Config) (*KubeReader, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultRequestTimeout
	}
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a client for %s: %w", cfg.Host, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a discovery client for %s: %w", cfg.Host, err)
	}
	return &KubeReader{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}, nil
}

// Get reads one object.
func (k *KubeReader) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	ri, err := k.resource(gvk, namespace)
	if err != nil {
		return nil, err
	}
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("getting %s %s: %w", gvk.Kind, nsName(namespace, name), err)
	}
	return obj, nil
}

// List reads every object of a kind in a namespace.
func (k *KubeReader) List(ctx context.Context, gvk schema.GroupVersionKind, namespace string) ([]unstructured.Unstructured, error) {
	ri, err := k.resource(gvk, namespace)
	if err != nil {
		return nil, err
	}
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s in namespace %s: %w", gvk.Kind, namespace, err)
	}
	return list.Items, nil
}

// resource maps a kind to its client, namespaced when the kind is.
func (k *KubeReader) resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, error) {
	if gvr, ok := known[gvk]; ok {
		return k.dyn.Resource(gvr).Namespace(namespace), nil
	}
	m, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("mapping %s to a resource: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		return k.dyn.Resource(m.Resource), nil
	}
	return k.dyn.Resource(m.Resource).Namespace(namespace), nil
}

func nsName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
