package live

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// App is what `status` reads of an Argo CD Application.
type App struct {
	Namespace, Name string
	// Revisions are the synced commits: status.sync.revision, or
	// status.sync.revisions for a multi-source Application.
	Revisions []string
	// MultiSource is true when the Application has spec.sources.
	MultiSource bool
	// SyncStatus and HealthStatus are Argo CD's own verdicts, for display.
	SyncStatus, HealthStatus string
	// SummaryImages is status.summary.images.
	SummaryImages []string
	// Resources are the managed objects of status.resources. Hooks
	// (`hook: true`) are left out: they run and go, and Argo CD does not
	// count them as part of the application.
	Resources []ManagedRef
	// DestinationNamespace is spec.destination.namespace.
	DestinationNamespace string
	// Destination names the cluster it deploys to: spec.destination.server
	// or spec.destination.name.
	Destination string
}

// inClusterServer and inClusterName are how an Application names the
// cluster Argo CD runs in.
const (
	inClusterServer = "https://kubernetes.default.svc"
	inClusterName   = "in-cluster"
)

// InCluster reports whether the app deploys to the cluster Argo CD runs in.
func (a *App) InCluster() bool {
	d := strings.TrimSuffix(strings.TrimSuffix(a.Destination, "/"), ":443")
	return d == "" || d == inClusterServer || d == inClusterName
}

// ManagedRef names one managed object, as status.resources lists it.
type ManagedRef struct {
	Group, Version, Kind, Namespace, Name string
}

// GVK returns the object's group, version and kind.
func (r ManagedRef) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// APIVersion returns group/version, or the version for the core group.
func (r ManagedRef) APIVersion() string {
	return r.GVK().GroupVersion().String()
}

// String names the object for humans: "Deployment/web (ns shop)".
func (r ManagedRef) String() string {
	s := r.Kind + "/" + r.Name
	if r.Namespace != "" {
		s += " (ns " + r.Namespace + ")"
	}
	return s
}

// ParseApp reads the fields `status` uses from an Application object.
func ParseApp(obj *unstructured.Unstructured) *App {
	a := &App{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	o := obj.Object
	a.SyncStatus, _, _ = unstructured.NestedString(o, "status", "sync", "status")
	a.HealthStatus, _, _ = unstructured.NestedString(o, "status", "health", "status")
	a.DestinationNamespace, _, _ = unstructured.NestedString(o, "spec", "destination", "namespace")
	a.Destination, _, _ = unstructured.NestedString(o, "spec", "destination", "server")
	if a.Destination == "" {
		a.Destination, _, _ = unstructured.NestedString(o, "spec", "destination", "name")
	}
	a.SummaryImages, _, _ = unstructured.NestedStringSlice(o, "status", "summary", "images")
	sources, _, _ := unstructured.NestedSlice(o, "spec", "sources")
	a.MultiSource = len(sources) > 0
	if revs, _, _ := unstructured.NestedStringSlice(o, "status", "sync", "revisions"); len(revs) > 0 {
		a.Revisions = revs
	} else if rev, _, _ := unstructured.NestedString(o, "status", "sync", "revision"); rev != "" {
		a.Revisions = []string{rev}
	}
	items, _, _ := unstructured.NestedSlice(o, "status", "resources")
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok || m["hook"] == true {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		a.Resources = append(a.Resources, ManagedRef{Group: s("group"), Version: s("version"), Kind: s("kind"), Namespace: s("namespace"), Name: s("name")})
	}
	return a
}
