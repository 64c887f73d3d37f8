package rules

import (
	"encoding/json"
	"fmt"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// Annotations the gate reads to name source files.
const (
	// AnnoOrigin is kustomize's origin annotation (buildMetadata: originAnnotations).
	AnnoOrigin = "config.kubernetes.io/origin"
	// AnnoTransformations is kustomize's transformer annotation
	// (buildMetadata: transformerAnnotations).
	AnnoTransformations = "alpha.config.kubernetes.io/transformations"
	// AnnoImageSources maps image repositories to the kustomization whose
	// images: entry set them (JSON); set by the in-process render.
	AnnoImageSources = "internal.kubectl-gate.dev/image-sources"
	// AnnoLocalConfig marks objects that are not applied to the cluster.
	AnnoLocalConfig = "config.kubernetes.io/local-config"
	// AnnoPinned is stamped by the Pin transformer on workloads it pinned.
	AnnoPinned = "kubectl-gate.dev/pinned"
	// ConfigAPIVersion is the apiVersion of the gate's own config objects.
	ConfigAPIVersion = "kubectl-gate.dev/v1alpha1"
)

// Key identifies an object in the render.
type Key struct {
	Kind, Namespace, Name string
}

// Index finds resources by kind, namespace and name.
type Index struct {
	byKey  map[Key]*yaml.RNode
	byKind map[string][]*yaml.RNode
}

// NewIndex indexes resources. Later duplicates win, as in a render.
func NewIndex(resources []*yaml.RNode) *Index {
	ix := &Index{byKey: map[Key]*yaml.RNode{}, byKind: map[string][]*yaml.RNode{}}
	for _, r := range resources {
		k := Key{kindOf(r), namespaceOf(r), nameOf(r)}
		ix.byKey[k] = r
		ix.byKind[k.Kind] = append(ix.byKind[k.Kind], r)
	}
	return ix
}

// Get returns the object of that kind, namespace and name, or nil.
func (ix *Index) Get(kind, namespace, name string) *yaml.RNode {
	return ix.byKey[Key{kind, namespace, name}]
}

// Kind returns every object of a kind, in render order.
func (ix *Index) Kind(kind string) []*yaml.RNode {
	return ix.byKind[kind]
}

// Ref returns the reference of an object, for findings.
func Ref(r *yaml.RNode) *ResourceRef {
	return &ResourceRef{APIVersion: apiVersionOf(r), Kind: kindOf(r), Name: nameOf(r), Namespace: namespaceOf(r)}
}

// Describe names an object for humans: "Deployment/web (ns prod)".
func (r *ResourceRef) String() string {
	if r == nil {
		return ""
	}
	s := r.Kind + "/" + r.Name
	if r.Namespace != "" {
		s += " (ns " + r.Namespace + ")"
	}
	return s
}

// IsLocalConfig reports whether an object is local configuration that is
// never applied: the local-config annotation, or the gate's own config.
func IsLocalConfig(r *yaml.RNode) bool {
	if apiVersionOf(r) == ConfigAPIVersion {
		return true
	}
	return yamlpath.Annotation(r.YNode(), AnnoLocalConfig) == "true"
}

// SourceFile names the file an object came from: kustomize's origin
// annotation, else the path annotation set by a reader.
func SourceFile(r *yaml.RNode) *File {
	if o := yamlpath.Annotation(r.YNode(), AnnoOrigin); o != "" {
		var origin struct {
			Path         string `yaml:"path"`
			ConfiguredIn string `yaml:"configuredIn"`
		}
		if err := yaml.Unmarshal([]byte(o), &origin); err == nil {
			if origin.Path != "" {
				return &File{Path: origin.Path}
			}
			if origin.ConfiguredIn != "" {
				return &File{Path: origin.ConfiguredIn}
			}
		}
	}
	path, index, _ := kioutil.GetFileAnnotations(r)
	if path == "" {
		return nil
	}
	i, _ := strconv.Atoi(index)
	return &File{Path: path, Index: i}
}

// TransformersOf returns the kustomization files of every transformer of a
// kind that ran over the object, in order.
func TransformersOf(r *yaml.RNode, transformerKind string) []string {
	t := yamlpath.Annotation(r.YNode(), AnnoTransformations)
	if t == "" {
		return nil
	}
	var list []struct {
		ConfiguredIn string `yaml:"configuredIn"`
		ConfiguredBy struct {
			Kind string `yaml:"kind"`
		} `yaml:"configuredBy"`
	}
	if err := yaml.Unmarshal([]byte(t), &list); err != nil {
		return nil
	}
	var out []string
	for _, e := range list {
		if e.ConfiguredBy.Kind == transformerKind {
			out = append(out, e.ConfiguredIn)
		}
	}
	return out
}

// ImageSetBy returns the kustomization whose images: entry set the image
// repository of an object, or "".
func ImageSetBy(r *yaml.RNode, repo string) string {
	s := yamlpath.Annotation(r.YNode(), AnnoImageSources)
	if s == "" {
		return ""
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return ""
	}
	return m[repo]
}

// finding builds a finding about an object, with its source file.
func finding(rule string, sev Severity, r *yaml.RNode, path string, current any, format string, args ...any) Finding {
	f := Finding{Rule: rule, Severity: sev, Message: fmt.Sprintf(format, args...), ResourceRef: Ref(r), File: SourceFile(r)}
	if path != "" {
		f.Field = &Field{Path: path, CurrentValue: current}
	}
	return f
}

// nameOf, namespaceOf, kindOf and apiVersionOf read an object's identity
// without kyaml's filter pipeline (hot paths on large renders).
func nameOf(r *yaml.RNode) string       { return yamlpath.String(r.YNode(), "metadata.name") }
func namespaceOf(r *yaml.RNode) string  { return yamlpath.String(r.YNode(), "metadata.namespace") }
func kindOf(r *yaml.RNode) string       { return yamlpath.String(r.YNode(), "kind") }
func apiVersionOf(r *yaml.RNode) string { return yamlpath.String(r.YNode(), "apiVersion") }

// memo returns the value cached under key for this run, computing it once:
// rules that need a whole-render view (which Rollouts name which Service)
// build it once, not once per object.
func memo[T any](c *Context, key string, build func() T) T {
	if v, ok := c.cache[key]; ok {
		return v.(T)
	}
	if c.cache == nil {
		c.cache = map[string]any{}
	}
	v := build()
	c.cache[key] = v
	return v
}

// str reads a string field at a dotted path ("spec.strategy.canary.canaryService").
func str(r *yaml.RNode, path string) string {
	return yamlpath.String(r.YNode(), path)
}
