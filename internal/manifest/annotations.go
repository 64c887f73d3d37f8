package manifest

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/workers"
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
	// AnnoHelmSource names the chart template an object was rendered from
	// (helm's "# Source:" line mapped to the file under the chart
	// directory); set by the gate's own Helm render, stripped before output.
	AnnoHelmSource = "internal.kubectl-gate.dev/helm-source"
	// AnnoLocalConfig marks objects that are not applied to the cluster.
	AnnoLocalConfig = "config.kubernetes.io/local-config"
	// AnnoPinned is stamped by the Pin transformer on workloads it pinned.
	AnnoPinned = "kubectl-gate.dev/pinned"
	// ConfigAPIVersion is the apiVersion of the gate's own config objects.
	ConfigAPIVersion = "kubectl-gate.dev/v1alpha1"
)

// IsLocalConfig reports whether an object is local configuration that is
// never applied: the local-config annotation, the gate's own config, or
// kustomize's configuration.
func IsLocalConfig(r *yaml.RNode) bool {
	switch av := APIVersion(r); {
	case av == ConfigAPIVersion, av == "builtin", strings.HasPrefix(av, "kustomize.config.k8s.io/"):
		// kustomize's own configuration (Kustomization, Component, builtin
		// transformer configs) never counts as a resource.
		return true
	}
	return yamlpath.Annotation(r.YNode(), AnnoLocalConfig) == "true"
}

// Count returns how many resources count as rendered: local-config objects
// and the gate's own config do not.
func Count(resources []*yaml.RNode) int {
	if len(resources) <= workers.RangeSize {
		return count(resources)
	}
	// On every core: a render is counted whole once it is judged, its
	// objects' nodes long out of the cache.
	var n atomic.Int64
	workers.Ranges(len(resources), workers.RangeSize, func(lo, hi int) { n.Add(int64(count(resources[lo:hi]))) })
	return int(n.Load())
}

func count(resources []*yaml.RNode) int {
	n := 0
	for _, r := range resources {
		if !IsLocalConfig(r) {
			n++
		}
	}
	return n
}

// SourceFile names the file an object came from: the chart template for a
// Helm render (kustomize's origin names only the kustomization of a
// helmCharts: entry), else kustomize's origin annotation, else the path
// annotation set by a reader.
func SourceFile(r *yaml.RNode) *finding.File {
	if p := yamlpath.Annotation(r.YNode(), AnnoHelmSource); p != "" {
		return &finding.File{Path: p}
	}
	if o := yamlpath.Annotation(r.YNode(), AnnoOrigin); o != "" {
		var origin struct {
			Path         string `yaml:"path"`
			ConfiguredIn string `yaml:"configuredIn"`
		}
		if err := yaml.Unmarshal([]byte(o), &origin); err == nil {
			if origin.Path != "" {
				return &finding.File{Path: origin.Path}
			}
			if origin.ConfiguredIn != "" {
				return &finding.File{Path: origin.ConfiguredIn}
			}
		}
	}
	path, index := FileAnnotations(r)
	if path == "" {
		return nil
	}
	i, _ := strconv.Atoi(index)
	return &finding.File{Path: path, Index: i}
}

// SourceFileAt is SourceFile with the line of a field (a path as
// k8s.io/apimachinery's field.Path writes it; "" for the object itself)
// where the object's own nodes know it: a document the stream reader read
// from a file (-f, an Application of --apps-root) keeps that file's lines,
// and the line is the field's, else the nearest enclosing field's the file
// writes. Anything else names the file alone: a rendered object (its lines
// are kustomize's or a template's, not the file's), a KRM function's item
// (lines of its ResourceList), a List's item.
func SourceFileAt(r *yaml.RNode, fieldPath string) *finding.File {
	f := SourceFile(r)
	if f != nil {
		if doc := StreamDoc(r, f.Path); doc != nil {
			f.Line = yamlpath.LineOf(doc, fieldPath)
		}
	}
	return f
}

// StreamDoc returns the object's node when its lines are those of the file
// path: a document the stream reader read from it, which names it and its
// index and starts a document at column 1 (a List's items never do); else
// nil. What builds objects from other text with those annotations clears
// the document node's line, as content can give both: the KRM function's
// items (lines of its ResourceList) and an ApplicationSet's Applications
// (one line of JSON).
func StreamDoc(r *yaml.RNode, path string) *yaml.Node {
	n := r.YNode()
	if n.Line <= 0 || n.Column != 1 || yamlpath.Annotation(n, AnnoHelmSource) != "" || yamlpath.Annotation(n, AnnoOrigin) != "" {
		return nil
	}
	if p, index := FileAnnotations(r); p != path || index == "" {
		return nil
	}
	return n
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

// ImageSource is where an object's image repository was set: a
// kustomization's images: entry, or an Argo CD Application's
// spec.source.kustomize.images entry, which Argo CD writes into the
// source's kustomization before it builds.
type ImageSource struct {
	// File holds the entry, Line (from 1; 0: unknown) is the entry's.
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// By names the entry for a reader, when it is not File's images:.
	By string `json:"by,omitempty"`
}

// Describe names the entry for a finding's message.
func (s ImageSource) Describe() string {
	if s.By != "" {
		return s.By
	}
	return s.File + " `images:`"
}

// ImageSetBy returns where the image repository of an object was set, as
// the renderer recorded it (AnnoImageSources); zero for an image no
// images: entry set. File is "" (By is not) for an entry of an
// Application a render made: it has no file of its own.
func ImageSetBy(r *yaml.RNode, repo string) ImageSource {
	s := yamlpath.Annotation(r.YNode(), AnnoImageSources)
	if s == "" {
		return ImageSource{}
	}
	var m map[string]ImageSource
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return ImageSource{}
	}
	return m[repo]
}

// FileAnnotations is kioutil.GetFileAnnotations read in place: the path and
// index a reader wrote on the object (their legacy keys where the current
// ones are absent; of a repeated key, the first, as kyaml decodes it).
// kyaml decodes the object's whole metadata for them, which a finding on
// every image of a large render paid once each.
func FileAnnotations(r *yaml.RNode) (path, index string) {
	annos := yamlpath.Get(r.YNode(), "metadata", "annotations")
	path, ok := firstAnnotation(annos, kioutil.PathAnnotation)
	if !ok {
		path, _ = firstAnnotation(annos, kioutil.LegacyPathAnnotation)
	}
	index, ok = firstAnnotation(annos, kioutil.IndexAnnotation)
	if !ok {
		index, _ = firstAnnotation(annos, kioutil.LegacyIndexAnnotation)
	}
	return path, index
}

// firstAnnotation is the value of the first key of annotations (a mapping
// node, else none) and whether there is one, as kyaml reads it: a null is
// "", an alias its name, a map or a list "".
func firstAnnotation(annos *yaml.Node, key string) (string, bool) {
	v := yamlpath.Field(annos, key)
	switch {
	case v == nil:
		return "", false
	case v.Kind == yaml.ScalarNode && v.Tag == yaml.NodeTagNull:
		return "", true
	case v.Kind == yaml.ScalarNode, v.Kind == yaml.AliasNode:
		return v.Value, true
	}
	return "", true
}
