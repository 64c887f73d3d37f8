package rules

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Reading Argo CD Applications: their sources and destination, shared by the
// argocd rules, the plugin's --apps-root renderer and selftest.

// IsApplication reports whether r is an Argo CD Application.
func IsApplication(r *yaml.RNode) bool { return isArgo(r, "Application") }

// isArgo reports whether r is an argoproj.io object of one of the kinds.
func isArgo(r *yaml.RNode, kinds ...string) bool {
	return strings.HasPrefix(apiVersionOf(r), "argoproj.io/") && slices.Contains(kinds, kindOf(r))
}

// IsArgoConfig reports whether r configures Argo CD itself (an Application,
// ApplicationSet or AppProject) rather than being what an Application deploys.
func IsArgoConfig(r *yaml.RNode) bool {
	return isArgo(r, "Application", "ApplicationSet", "AppProject")
}

// ArgoSource is one source of an Application: spec.source (Index -1) or
// spec.sources[Index].
type ArgoSource struct {
	Index int
	// Field is where the source sits: "spec.source" or "spec.sources[1]".
	Field                     string
	RepoURL, Path, Chart, Ref string
	// Helm and Plugin are set when the source carries helm: or plugin:.
	Helm, Plugin bool
	// Kustomize and Directory are the source's kustomize: and directory:
	// maps, nil when absent.
	Kustomize, Directory *yaml.RNode
}

// Manifests reports whether the source produces manifests. A source with a
// ref and neither path nor chart only lends its files to other sources
// (Helm $ref values files) and deploys nothing of its own.
func (s ArgoSource) Manifests() bool {
	return s.Ref == "" || s.Path != "" || s.Chart != ""
}

// PathField is the field path of the source's path, for findings.
func (s ArgoSource) PathField() string { return s.Field + ".path" }

// ArgoSources returns an Application's sources. When spec.sources is set,
// Argo CD ignores spec.source, and so does this.
func ArgoSources(app *yaml.RNode) []ArgoSource {
	if list, err := app.Pipe(yaml.Lookup("spec", "sources")); err == nil && list != nil {
		if elems, _ := list.Elements(); len(elems) > 0 {
			out := make([]ArgoSource, len(elems))
			for i, e := range elems {
				out[i] = readSource(e, i, fmt.Sprintf("spec.sources[%d]", i))
			}
			return out
		}
	}
	if src, err := app.Pipe(yaml.Lookup("spec", "source")); err == nil && src != nil {
		return []ArgoSource{readSource(src, -1, "spec.source")}
	}
	return nil
}

func readSource(n *yaml.RNode, index int, field string) ArgoSource {
	return ArgoSource{
		Index: index, Field: field,
		RepoURL: str(n, "repoURL"), Path: str(n, "path"), Chart: str(n, "chart"), Ref: str(n, "ref"),
		Helm: n.Field("helm") != nil, Plugin: n.Field("plugin") != nil,
		Kustomize: mapField(n, "kustomize"), Directory: mapField(n, "directory"),
	}
}

func mapField(n *yaml.RNode, name string) *yaml.RNode {
	f := n.Field(name)
	if f == nil || f.Value.YNode().Kind != yaml.MappingNode {
		return nil
	}
	return f.Value
}

// AppName names an Application for messages: "argocd/shop-prod".
func AppName(app *yaml.RNode) string {
	if ns := namespaceOf(app); ns != "" {
		return ns + "/" + nameOf(app)
	}
	return nameOf(app)
}

// sameObject reports whether two nodes are the same object (kind,
// namespace, name): selftest mutates copies of the input.
func sameObject(a, b *yaml.RNode) bool {
	return a != nil && b != nil && kindOf(a) == kindOf(b) && namespaceOf(a) == namespaceOf(b) && nameOf(a) == nameOf(b)
}

// appSources returns the renders of an Application's sources, by source
// index.
func appSources(c *Context, app *yaml.RNode) map[int]AppSource {
	out := map[int]AppSource{}
	for _, a := range c.Apps {
		if sameObject(a.App, app) {
			out[a.Index] = a
		}
	}
	return out
}

// clusterScoped lists built-in and common cluster-scoped kinds; a CRD in the
// render adds its own, and any other kind named Cluster* counts as well.
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"CustomResourceDefinition": true, "StorageClass": true, "PriorityClass": true, "RuntimeClass": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"MutatingAdmissionPolicy": true, "MutatingAdmissionPolicyBinding": true,
	"APIService": true, "CSIDriver": true, "CSINode": true, "IngressClass": true, "VolumeAttachment": true,
	"PodSecurityPolicy": true, "CertificateSigningRequest": true, "FlowSchema": true,
	"PriorityLevelConfiguration": true, "VolumeSnapshotClass": true, "VolumeSnapshotContent": true,
	"GatewayClass": true, "ComponentStatus": true,
}

// namespacedCluster lists Cluster* kinds that are namespaced nevertheless.
var namespacedCluster = map[string]bool{"Cluster": true, "ClusterServiceVersion": true}

// scopeOf tells cluster-scoped kinds apart, with the render's CRDs.
type scopeOf map[string]bool

func newScopeOf(resources []*yaml.RNode) scopeOf {
	s := scopeOf{}
	for _, r := range resources {
		if kindOf(r) == "CustomResourceDefinition" {
			kind := str(r, "spec.names.kind")
			s[kind] = str(r, "spec.scope") == "Cluster"
		}
	}
	return s
}

func (s scopeOf) cluster(kind string) bool {
	if v, ok := s[kind]; ok {
		return v
	}
	if clusterScoped[kind] {
		return true
	}
	return strings.HasPrefix(kind, "Cluster") && !namespacedCluster[kind]
}

// Namespaced reports whether an object of a render is one that Argo CD puts
// into a namespace — the destination namespace when it sets none — leaving
// out cluster-scoped kinds (the render's CRDs say for custom kinds), local
// config and Argo CD's own objects.
func Namespaced(obj *yaml.RNode, render []*yaml.RNode) bool {
	return !IsLocalConfig(obj) && !IsArgoConfig(obj) && !newScopeOf(render).cluster(kindOf(obj))
}
