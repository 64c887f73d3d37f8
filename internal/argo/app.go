package argo

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// IsApplication reports whether r is an Argo CD Application.
func IsApplication(r *yaml.RNode) bool { return Is(r, "Application") }

// Is reports whether r is an argoproj.io object of one of the kinds.
func Is(r *yaml.RNode, kinds ...string) bool {
	return strings.HasPrefix(manifest.APIVersion(r), "argoproj.io/") && slices.Contains(kinds, manifest.Kind(r))
}

// IsArgoConfig reports whether r configures Argo CD itself (an Application,
// ApplicationSet or AppProject) rather than being what an Application deploys.
func IsArgoConfig(r *yaml.RNode) bool {
	return Is(r, "Application", "ApplicationSet", "AppProject")
}

// Source is one source of an Application: spec.source (Index -1) or
// spec.sources[Index].
type Source struct {
	Index int
	// Field is where the source sits: "spec.source" or "spec.sources[1]".
	Field                     string
	RepoURL, Path, Chart, Ref string
	// TargetRevision is the revision the source tracks ("" is HEAD).
	TargetRevision string
	// Helm and Plugin are set when the source carries helm: or plugin:.
	Helm, Plugin bool
	// Kustomize, Directory and HelmSpec are the source's kustomize:,
	// directory: and helm: maps, nil when absent.
	Kustomize, Directory, HelmSpec *yaml.RNode
}

// Manifests reports whether the source produces manifests. A source with a
// ref and neither path nor chart only lends its files to other sources
// (Helm $ref values files) and deploys nothing of its own.
func (s Source) Manifests() bool {
	return s.Ref == "" || s.Path != "" || s.Chart != ""
}

// PathField is the field path of the source's path, for findings.
func (s Source) PathField() string { return s.Field + ".path" }

// Sources returns an Application's sources. When spec.sources is set,
// Argo CD ignores spec.source, and so does this.
func Sources(app *yaml.RNode) []Source {
	if list, err := app.Pipe(yaml.Lookup("spec", "sources")); err == nil && list != nil {
		if elems, _ := list.Elements(); len(elems) > 0 {
			out := make([]Source, len(elems))
			for i, e := range elems {
				out[i] = readSource(e, i, fmt.Sprintf("spec.sources[%d]", i))
			}
			return out
		}
	}
	if src, err := app.Pipe(yaml.Lookup("spec", "source")); err == nil && src != nil {
		return []Source{readSource(src, -1, "spec.source")}
	}
	return nil
}

func readSource(n *yaml.RNode, index int, field string) Source {
	return Source{
		Index: index, Field: field,
		RepoURL: manifest.Str(n, "repoURL"), Path: manifest.Str(n, "path"), Chart: manifest.Str(n, "chart"), Ref: manifest.Str(n, "ref"),
		TargetRevision: manifest.Str(n, "targetRevision"),
		Helm:           n.Field("helm") != nil, Plugin: n.Field("plugin") != nil,
		Kustomize: mapField(n, "kustomize"), Directory: mapField(n, "directory"), HelmSpec: mapField(n, "helm"),
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
	if ns := manifest.Namespace(app); ns != "" {
		return ns + "/" + manifest.Name(app)
	}
	return manifest.Name(app)
}

// AppSource is an Argo CD Application with the render of one of its local
// sources (the plugin renders them with --apps-root).
type AppSource struct {
	// App is the Application object from the input.
	App *yaml.RNode
	// Index is the source's index in spec.sources, or -1 for spec.source.
	Index int
	// Path is the source directory that was rendered.
	Path string
	// Resources is the source's render; Err is set when it could not be
	// rendered, Skipped when the gate does not render that kind of source
	// (Helm, a remote repository) and says why.
	Resources []*yaml.RNode
	Err       error
	Skipped   string
	// Summary, when set, stands for Resources: what the rules read of a
	// render that was released once checked (the pipeline's check of an
	// estate, unit by unit). Resources is then nil.
	Summary *Summary
	// Unrendered says why a Flux object's source was not rendered (its
	// GitRepository's ref names a revision the checkout's history does
	// not have): flux-not-rendered reports it, no verdict unless excluded.
	Unrendered string
	// Unchanged says why the source was not rendered at all, when nothing
	// it reads differs from the revision it is compared with (diff --base:
	// the same at both revisions, so its render cannot have changed). The
	// rules judge neither its render nor its absence.
	Unchanged string
	// Assumed is set on the first source that named a repository when the
	// checkout has no git remote and no --repo-url was given: the gate took
	// that repository as the checkout, and says so (an info finding).
	Assumed string
}

// Judged reports whether the rules judge the source's render: it was
// rendered (no error, not skipped, not left unrendered as unchanged).
func (a AppSource) Judged() bool { return a.Err == nil && a.Skipped == "" && a.Unchanged == "" }

// RendersOf returns the renders of an Application's sources, by source
// index. The Application is matched by kind, namespace and name: selftest
// mutates copies of the input.
//
// It scans every render; a caller asking for many Applications builds a
// [Renders] index once instead (one scan per Application made 20,000
// Applications quadratic).
func RendersOf(apps []AppSource, app *yaml.RNode) map[int]AppSource {
	return IndexRenders(apps).Of(app)
}

// Renders indexes the renders of Applications' sources by Application.
type Renders map[manifest.Key]map[int]AppSource

// IndexRenders builds the index in one pass.
func IndexRenders(apps []AppSource) Renders {
	out := Renders{}
	for _, a := range apps {
		if a.App == nil {
			continue
		}
		k := manifest.KeyOf(a.App)
		if out[k] == nil {
			out[k] = map[int]AppSource{}
		}
		out[k][a.Index] = a
	}
	return out
}

// Of returns the renders of app's sources by source index (never nil).
func (r Renders) Of(app *yaml.RNode) map[int]AppSource {
	if m := r[manifest.KeyOf(app)]; m != nil {
		return m
	}
	return map[int]AppSource{}
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

// ScopeOf tells cluster-scoped kinds apart, with the render's CRDs.
type ScopeOf map[string]bool

// NewScopeOf reads the scope of the render's CRDs.
func NewScopeOf(resources []*yaml.RNode) ScopeOf {
	s := ScopeOf{}
	for _, r := range resources {
		if manifest.Kind(r) == "CustomResourceDefinition" {
			kind := manifest.Str(r, "spec.names.kind")
			s[kind] = manifest.Str(r, "spec.scope") == "Cluster"
		}
	}
	return s
}

// Cluster reports whether objects of a kind are cluster-scoped.
func (s ScopeOf) Cluster(kind string) bool {
	if v, ok := s[kind]; ok {
		return v
	}
	if clusterScoped[kind] {
		return true
	}
	return strings.HasPrefix(kind, "Cluster") && !namespacedCluster[kind]
}

// Namespaced reports whether an object of the render s was made of is one
// that Argo CD puts into a namespace — the destination namespace when it
// sets none — leaving out cluster-scoped kinds (the render's CRDs say for
// custom kinds), local config and Argo CD's own objects. Make s once per
// render: making it reads every object.
func (s ScopeOf) Namespaced(obj *yaml.RNode) bool {
	return !manifest.IsLocalConfig(obj) && !IsArgoConfig(obj) && !s.Cluster(manifest.Kind(obj))
}

// ByNamespace groups a render's namespaced objects by the namespace they
// render into ("" when they set none) — what the Application's destination
// (or a Flux Kustomization's targetNamespace) is judged against. Local
// config, Argo CD's own objects, cluster-scoped kinds and what skip
// reports are left out.
func ByNamespace(resources []*yaml.RNode, skip func(*yaml.RNode) bool) map[string][]*yaml.RNode {
	scope := NewScopeOf(resources)
	out := map[string][]*yaml.RNode{}
	for _, r := range resources {
		if !scope.Namespaced(r) || (skip != nil && skip(r)) {
			continue
		}
		out[manifest.Namespace(r)] = append(out[manifest.Namespace(r)], r)
	}
	return out
}

// Namespaces returns the keys of a ByNamespace grouping, sorted.
func Namespaces[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
