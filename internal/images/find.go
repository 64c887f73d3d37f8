package images

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
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
	if err := c.Node.PipeE(yaml.SetField("image", yaml.NewStringRNode(image))); err != nil {
		return fmt.Errorf("setting %s: %w", c.Path, err)
	}
	c.Image = image
	return nil
}

var containerLists = []string{"initContainers", "containers", "ephemeralContainers"}

// Find returns every container image of an object.
func Find(obj *yaml.RNode, extra []PodSpecPath) []Container {
	var out []Container
	for _, p := range PodSpecPaths(obj, extra) {
		spec, err := obj.Pipe(yaml.Lookup(strings.Split(p, ".")...))
		if err != nil || spec == nil || spec.YNode().Kind != yaml.MappingNode {
			continue
		}
		out = append(out, containers(spec, p)...)
	}
	return out
}

func containers(spec *yaml.RNode, prefix string) []Container {
	var out []Container
	for _, list := range containerLists {
		seq := spec.Field(list)
		if seq == nil || seq.Value.YNode().Kind != yaml.SequenceNode {
			continue
		}
		items, _ := seq.Value.Elements()
		for i, c := range items {
			img := c.Field("image")
			if img == nil {
				continue
			}
			out = append(out, Container{
				Node:  c,
				Name:  yaml.GetValue(c.Field("name").Value),
				Image: yaml.GetValue(img.Value),
				Path:  fmt.Sprintf("%s.%s[%d].image", prefix, list, i),
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
	spec, err := obj.Pipe(yaml.Lookup(strings.Split(path, ".")...))
	return err == nil && spec != nil && (spec.Field("containers") != nil || spec.Field("initContainers") != nil)
}
