package images

import (
	"fmt"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// PodSpecPath is a pod spec location in a custom kind.
type PodSpecPath struct {
	Kind string
	Path string // dotted, e.g. "spec.runner.template.spec"
}

// Container is one image field in a rendered object.
type Container struct {
	// Node is the container map; SetImage rewrites its image field.
	Node *yaml.RNode
	// Name is the container's name.
	Name string
	// Image is the image reference as written.
	Image string
	// Path is the image field's path, e.g.
	// "spec.template.spec.containers[0].image".
	Path string
}

// SetImage rewrites the container's image.
func (c *Container) SetImage(image string) error {
	v := yamlpath.Field(c.Node.YNode(), "image")
	if v == nil || v.Kind != yaml.ScalarNode {
		return fmt.Errorf("setting %s: the image field is not a string", c.Path)
	}
	v.Value, v.Tag = image, yaml.NodeTagString
	if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		v.Style = 0
	}
	c.Image = image
	return nil
}

var containerLists = []string{"initContainers", "containers", "ephemeralContainers"}

// Find returns every container image of an object.
func Find(obj *yaml.RNode, extra []PodSpecPath) []Container {
	var out []Container
	for _, p := range PodSpecPaths(obj, extra) {
		spec := yamlpath.Dotted(obj.YNode(), p)
		if spec == nil || spec.Kind != yaml.MappingNode {
			continue
		}
		out = append(out, containers(spec, p)...)
	}
	return out
}

func containers(spec *yaml.Node, prefix string) []Container {
	var out []Container
	for _, list := range containerLists {
		seq := yamlpath.Field(spec, list)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for i, c := range seq.Content {
			img := yamlpath.Field(c, "image")
			if img == nil || img.Kind != yaml.ScalarNode {
				continue
			}
			name := ""
			if n := yamlpath.Field(c, "name"); n != nil {
				name = n.Value
			}
			out = append(out, Container{
				Node:  yaml.NewRNode(c),
				Name:  name,
				Image: img.Value,
				Path:  prefix + "." + list + "[" + strconv.Itoa(i) + "].image",
			})
		}
	}
	return out
}

var templateKinds = map[string]bool{
	"ReplicationController": true, "ReplicaSet": true, "Deployment": true,
	"StatefulSet": true, "DaemonSet": true, "Job": true, "Rollout": true,
}

// PodSpecPaths returns the dotted paths of an object's pod specs.
func PodSpecPaths(obj *yaml.RNode, extra []PodSpecPath) []string {
	kind := obj.GetKind()
	var paths []string
	switch {
	case kind == "Pod":
		paths = append(paths, "spec")
	case kind == "PodTemplate":
		paths = append(paths, "template.spec")
	case kind == "CronJob":
		paths = append(paths, "spec.jobTemplate.spec.template.spec")
	case templateKinds[kind]:
		paths = append(paths, "spec.template.spec")
	default:
		// Any other kind with a pod spec in the usual places.
		for _, p := range []string{"spec.template.spec", "spec.jobTemplate.spec.template.spec"} {
			if hasContainers(obj, p) {
				paths = append(paths, p)
			}
		}
	}
	for _, e := range extra {
		if e.Kind == kind {
			paths = append(paths, e.Path)
		}
	}
	return paths
}

func hasContainers(obj *yaml.RNode, path string) bool {
	spec := yamlpath.Dotted(obj.YNode(), path)
	return yamlpath.Field(spec, "containers") != nil || yamlpath.Field(spec, "initContainers") != nil
}
