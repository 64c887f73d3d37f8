package images

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// KnownField is an image field of a well-known custom kind. The walk by
// name finds these too; declaring them means a value that is not a valid
// reference is a finding rather than skipped, and a known field is never
// taken for a repository joined with a version.
type KnownField struct {
	Group, Kind, Path string
}

// KnownFields are the image fields of the operators whose custom resources
// run an image without a container: Prometheus Operator (the image of
// Prometheus, PrometheusAgent, Alertmanager, ThanosRuler, and of
// Prometheus's Thanos sidecar) and the Spark operator (the application's
// image and its driver's and executors'). Argo Workflows templates' container
// and script are containers, read by the container walk.
var KnownFields = []KnownField{
	{"monitoring.coreos.com", "Prometheus", "spec.image"},
	{"monitoring.coreos.com", "Prometheus", "spec.thanos.image"},
	{"monitoring.coreos.com", "PrometheusAgent", "spec.image"},
	{"monitoring.coreos.com", "Alertmanager", "spec.image"},
	{"monitoring.coreos.com", "ThanosRuler", "spec.image"},
	{"sparkoperator.k8s.io", "SparkApplication", "spec.image"},
	{"sparkoperator.k8s.io", "SparkApplication", "spec.driver.image"},
	{"sparkoperator.k8s.io", "SparkApplication", "spec.executor.image"},
	{"sparkoperator.k8s.io", "ScheduledSparkApplication", "spec.template.image"},
	{"sparkoperator.k8s.io", "ScheduledSparkApplication", "spec.template.driver.image"},
	{"sparkoperator.k8s.io", "ScheduledSparkApplication", "spec.template.executor.image"},
}

// notGuessed are API groups whose fields named image are not images that
// run: Flux's image automation scans a repository (ImageRepository
// spec.image is a repository name, never pinned).
var notGuessed = map[string]bool{"image.toolkit.fluxcd.io": true}

// chartValues are the keys under which Argo CD and Flux hold a Helm chart's
// values (HelmRelease spec.values, an Application's helm.valuesObject):
// inputs of a chart whose own templates decide what runs (an `image` there
// is often a repository joined with a tag elsewhere); the chart's render is
// what the gate checks.
var chartValues = map[string]bool{"values": true, "valuesObject": true}

// guessable reports whether fields named image are taken as images in
// objects of this API group and kind. A ConfigMap's or Secret's data is an
// application's configuration, which no kubelet or controller pulls.
func guessable(group, kind string) bool {
	if group == "" && (kind == "ConfigMap" || kind == "Secret") {
		return false
	}
	return !notGuessed[group]
}

// declaredFields returns the known and configured image fields of an
// object. Unlike the fields found by name, they are kept whatever they
// hold.
func declaredFields(root *yaml.Node, group, kind string, extra []PodSpecPath) []Container {
	var out []Container
	for _, f := range KnownFields {
		if f.Group == group && f.Kind == kind {
			out = append(out, fieldsAt(root, f.Path)...)
		}
	}
	for _, e := range extra {
		if e.Field && e.Kind == kind {
			out = append(out, fieldsAt(root, e.Path)...)
		}
	}
	// A path given twice (known and configured) is one field.
	seen := map[*yaml.Node]bool{}
	uniq := out[:0]
	for _, c := range out {
		if v := yamlpath.Field(c.Node.YNode(), c.Key); !seen[v] {
			seen[v] = true
			uniq = append(uniq, c)
		}
	}
	return uniq
}

// fieldsAt returns the string fields at a dotted path ("spec.image",
// "spec.engines[].imageRef") of root.
func fieldsAt(root *yaml.Node, path string) []Container {
	parent, key := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, key = path[:i], path[i+1:]
	}
	holders := []PodSpec{{Node: root}}
	if parent != "" {
		holders = Resolve(yaml.NewRNode(root), parent)
	}
	var out []Container
	for _, h := range holders {
		v := yamlpath.Field(h.Node, key)
		if v == nil || v.Kind != yaml.ScalarNode {
			continue
		}
		out = append(out, Container{Node: yaml.NewRNode(h.Node), Image: v.Value, Key: key, Field: true, Path: joinPath(h.Path, key)})
	}
	return out
}
