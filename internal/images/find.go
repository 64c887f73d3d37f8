package images

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/workers"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// PodSpecPath is a configured image location in a custom kind: a pod spec
// (spec.images.podSpecPaths) or, with Field set, a string field holding an
// image reference (spec.images.fields).
type PodSpecPath struct {
	Kind string
	// Path is dotted; a segment ending in "[]" stands for every item of a
	// list, e.g. "spec.templates[].template.spec". A Field path ends at the
	// string field ("spec.engines[].imageRef").
	Path string
	// Field is set when Path names an image field, not a pod spec.
	Field bool
}

// Container is one image field in a rendered object: a container's image,
// or an image field of a custom kind (Field set).
type Container struct {
	// Node is the mapping that holds the image field; SetImage rewrites it.
	Node *yaml.RNode
	// Name is the container's name ("" for a field).
	Name string
	// Image is the image reference as written.
	Image string
	// Path is the image field's path, e.g.
	// "spec.template.spec.containers[0].image" or "spec.executor.image".
	Path string
	// Key is the field of Node that holds the image; "" means "image".
	Key string
	// Field is set for an image field that is not a container's: a field
	// named image found by name (Prometheus spec.image, SparkApplication
	// spec.executor.image), an image volume's reference, a configured field.
	Field bool
}

// Describe names the image's place for a message: `container "web"` or
// `field spec.image`.
func (c *Container) Describe() string {
	if c.Field {
		return "field " + c.Path
	}
	return fmt.Sprintf("container %q", c.Name)
}

// SetImage rewrites the container's image.
func (c *Container) SetImage(image string) error {
	key := c.Key
	if key == "" {
		key = "image"
	}
	v := yamlpath.Field(c.Node.YNode(), key)
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

// containerLists are the pod spec's lists of containers, in the order their
// images are reported.
var containerLists = []string{"initContainers", "containers", "ephemeralContainers"}

// otherLists hold containers in other schemas: Argo Workflows and Tekton
// sidecars, Tekton steps. Only items with an image count.
var otherLists = map[string]bool{"sidecars": true, "steps": true}

// singles hold one container: Argo Workflows templates' container and script,
// Tekton's stepTemplate.
var singles = map[string]bool{"container": true, "script": true, "stepTemplate": true}

// Find returns every image of an object: every container list (containers,
// initContainers, ephemeralContainers, sidecars, steps), every single
// container (container, script, stepTemplate) and every image volume's
// reference at any depth of the object, outside metadata and status; the
// well-known image fields of its kind (KnownFields) and the configured pod
// spec paths and image fields of its kind; and every other string field
// named image that holds a valid image reference (see guessable). A
// workload nested in any CRD is found without configuration.
func Find(obj *yaml.RNode, extra []PodSpecPath) []Container {
	if obj == nil || Describes(obj) {
		return nil
	}
	root := obj.YNode()
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil
	}
	apiVersion, kind := yamlpath.String(root, "apiVersion"), yamlpath.String(root, "kind")
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	declared := declaredFields(root, group, kind, extra)
	w := walker{fields: map[*yaml.Node]bool{}, guess: guessable(group, kind)}
	for _, c := range declared {
		w.fields[yamlpath.Field(c.Node.YNode(), c.Key)] = true
	}
	if w.guess {
		w.guessField(root)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i].Value
		if k == "metadata" || k == "status" || k == "apiVersion" || k == "kind" {
			continue
		}
		w.visitKey(k, root.Content[i+1])
	}
	w.out = append(w.out, declared...)
	for _, e := range extra {
		if e.Kind != kind || e.Field {
			continue
		}
		if w.seen == nil {
			w.seen = make(map[*yaml.Node]bool, len(w.out))
			for _, c := range w.out {
				w.seen[c.Node.YNode()] = true
			}
		}
		for _, ps := range Resolve(obj, e.Path) {
			w.path = append(w.path[:0], ps.Path)
			w.podSpec(ps.Node, true)
		}
	}
	if group == kroGroup {
		w.out = slices.DeleteFunc(w.out, func(c Container) bool { return strings.Contains(c.Image, "${") })
	}
	return w.out
}

// kroGroup is kro's API group. A ResourceGraphDefinition's
// spec.resources[].template is the object kro creates for each instance,
// written with CEL expressions: `image: ${schema.spec.image}` is no image
// reference but the instance's field, which is checked on the instance
// (its spec.image, found by name). Such an image is not the template's to
// judge; a literal one (`image: nginx:latest`) runs in every instance as
// written and is checked as any other.
const kroGroup = "kro.run"

// Describes reports objects whose container-shaped fields describe other
// objects rather than run anything: Kyverno policies (a pattern such as
// `image: "!*:latest"`) and CustomResourceDefinitions (schemas).
func Describes(obj *yaml.RNode) bool {
	group, _, _ := strings.Cut(yamlpath.String(obj.YNode(), "apiVersion"), "/")
	return group == "kyverno.io" || strings.HasSuffix(group, ".kyverno.io") || group == "apiextensions.k8s.io"
}

// walker collects containers; path is the stack of path segments.
type walker struct {
	path []string
	out  []Container
	seen map[*yaml.Node]bool // containers found, for configured paths
	// fields are the image fields' value nodes already declared (known or
	// configured), which the walk by name must not add again.
	fields map[*yaml.Node]bool
	// guess: add string fields named image found by name (guessable).
	guess bool
	// noGuess counts the enclosing subtrees where fields are not guessed.
	noGuess int
}

func (w *walker) visitKey(key string, v *yaml.Node) {
	w.path = append(w.path, key)
	defer func() { w.path = w.path[:len(w.path)-1] }()
	if chartValues[key] {
		w.noGuess++
		defer func() { w.noGuess-- }()
	}
	switch v.Kind {
	case yaml.MappingNode:
		if singles[key] && hasImage(v) {
			w.add(v, "")
			return
		}
		w.mapping(v)
	case yaml.SequenceNode:
		w.list(v)
	}
}

// mapping visits a mapping: its container lists first, in pod spec order,
// then every other key in document order. A mapping that is not a
// container but has a string field named image is an image field.
func (w *walker) mapping(m *yaml.Node) {
	if w.guess && w.noGuess == 0 {
		w.guessField(m)
	}
	if w.podSpec(m, false) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if k := m.Content[i].Value; k != "initContainers" && k != "containers" && k != "ephemeralContainers" {
				w.visitKey(k, m.Content[i+1])
			}
		}
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		w.visitKey(m.Content[i].Value, m.Content[i+1])
	}
}

// podSpec adds the containers of m's container lists and reports whether m
// has any.
func (w *walker) podSpec(m *yaml.Node, configured bool) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	found := false
	for _, list := range containerLists {
		seq := yamlpath.Field(m, list)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		found = true
		w.path = append(w.path, list)
		for i, c := range seq.Content {
			if !hasImage(c) {
				continue
			}
			if configured && w.seen[c] {
				continue
			}
			w.add(c, "["+strconv.Itoa(i)+"]")
		}
		w.path = w.path[:len(w.path)-1]
	}
	if !configured {
		w.imageVolumes(m)
	}
	return found
}

// imageVolumes adds the references of a pod spec's image volumes
// (volumes[].image.reference, Kubernetes 1.31+): the kubelet pulls them
// like container images, and kustomize's images transformer edits them.
func (w *walker) imageVolumes(m *yaml.Node) {
	seq := yamlpath.Field(m, "volumes")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return
	}
	base := strings.Join(w.path, ".")
	for i, v := range seq.Content {
		img := yamlpath.Field(v, "image")
		ref := yamlpath.Field(img, "reference")
		if ref == nil || ref.Kind != yaml.ScalarNode {
			continue
		}
		w.out = append(w.out, Container{Node: yaml.NewRNode(img), Image: ref.Value, Key: "reference", Field: true,
			Path: joinPath(base, "volumes["+strconv.Itoa(i)+"].image.reference")})
	}
}

// list visits a sequence: items with an image are containers when the key
// names a container list; every other item is walked.
func (w *walker) list(seq *yaml.Node) {
	key := w.path[len(w.path)-1]
	for i, item := range seq.Content {
		if item.Kind != yaml.MappingNode && item.Kind != yaml.SequenceNode {
			continue
		}
		idx := "[" + strconv.Itoa(i) + "]"
		if otherLists[key] && hasImage(item) {
			w.add(item, idx)
			continue
		}
		w.path[len(w.path)-1] = key + idx
		if item.Kind == yaml.MappingNode {
			w.mapping(item)
		} else {
			w.list(item)
		}
		w.path[len(w.path)-1] = key
	}
}

func (w *walker) add(c *yaml.Node, suffix string) {
	img := yamlpath.Field(c, "image")
	name := ""
	if n := yamlpath.Field(c, "name"); n != nil {
		name = n.Value
	}
	if w.seen != nil {
		w.seen[c] = true
	}
	w.out = append(w.out, Container{
		Node:  yaml.NewRNode(c),
		Name:  name,
		Image: img.Value,
		Path:  strings.Join(w.path, ".") + suffix + ".image",
	})
}

// guessField adds m's string field named image, found by its name, unless
// a known or configured field already holds it or the container walk reads
// m as a container. m is at w.path (the object's root when it is empty);
// that path is built only for a field added.
func (w *walker) guessField(m *yaml.Node) {
	v := yamlpath.Field(m, "image")
	if v == nil || v.Kind != yaml.ScalarNode || v.ShortTag() != yaml.NodeTagString || w.fields[v] {
		return
	}
	if _, ok := Parse(v.Value); !ok || strings.ContainsAny(v.Value, " \t\n") || compound(m, v.Value) {
		return
	}
	w.fields[v] = true
	w.out = append(w.out, Container{Node: yaml.NewRNode(m), Image: v.Value, Key: "image", Field: true,
		Path: joinPath(strings.Join(w.path, "."), "image")})
}

// compound reports an image field that names only a repository beside a
// tag or version field: the controller joins them (argocd-operator's ArgoCD
// spec.image + spec.version, chart values' image + tag), so the field alone
// is not what runs and a digest written into it would break the join.
func compound(m *yaml.Node, image string) bool {
	ref, ok := Parse(image)
	if !ok || ref.Tag != "" || ref.HasDigest() {
		return false
	}
	for _, k := range []string{"tag", "version", "imageTag"} {
		if f := yamlpath.Field(m, k); f != nil && f.Kind == yaml.ScalarNode {
			return true
		}
	}
	return false
}

func joinPath(base, rest string) string {
	if base == "" {
		return rest
	}
	return base + "." + rest
}

func hasImage(c *yaml.Node) bool {
	img := yamlpath.Field(c, "image")
	return img != nil && img.Kind == yaml.ScalarNode
}

// Image is one container image of one object, parsed.
type Image struct {
	Obj *yaml.RNode
	Container
	Ref Ref
	// Valid is false when Image does not parse as a reference.
	Valid bool
}

// Collect is the one walk over a render that both check and pin use: every
// container of every object that skip does not leave out, each image parsed
// once however many objects share it.
func Collect(resources []*yaml.RNode, extra []PodSpecPath, skip func(*yaml.RNode) bool) []Image {
	// Every object's containers first, then the images in one slice of
	// the right size: grown by append, the slice of a 10,000-object render
	// allocated five times its final size.
	found := make([][]Container, len(resources))
	counts := inChunks(len(resources), func(lo, hi int) (n int) {
		for i := lo; i < hi; i++ {
			if obj := resources[i]; skip == nil || !skip(obj) {
				found[i] = Find(obj, extra)
				n += len(found[i])
			}
		}
		return n
	})
	n := 0
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return nil
	}
	out := make([]Image, 0, n)
	for i, obj := range resources {
		for _, c := range found[i] {
			ref, ok := parseCached(c.Image)
			out = append(out, Image{Obj: obj, Container: c, Ref: ref, Valid: ok})
		}
	}
	return out
}

// parsed is a reference Parse read, kept by parseCached.
type parsed struct {
	ref Ref
	ok  bool
}

// parsedRefs holds up to maxParsedRefs references Parse read, for every
// Collect of the process: 10,000 objects use a few hundred images, and
// the streamed check collects each run of objects on its own.
var (
	parsedRefs    sync.Map // string → parsed
	parsedCount   atomic.Int64
	maxParsedRefs = int64(16384)
)

// parseCached is Parse, remembered for the first maxParsedRefs images.
func parseCached(image string) (Ref, bool) {
	if p, ok := parsedRefs.Load(image); ok {
		return p.(parsed).ref, p.(parsed).ok
	}
	if parsedCount.Load() >= maxParsedRefs {
		return Parse(image)
	}
	image = strings.Clone(image) // the cache keeps no part of a render
	ref, ok := Parse(image)
	if _, loaded := parsedRefs.LoadOrStore(image, parsed{ref, ok}); !loaded {
		parsedCount.Add(1)
	}
	return ref, ok
}

// chunkFrom is the number of objects from which inChunks spreads them
// over the cores.
const chunkFrom = 256

// inChunks cuts 0…n into one contiguous range per core (one range below
// chunkFrom objects) and runs fn on each at the same time, returning
// what each returned. Collect's walk of a large render was one core's
// work while rules that need its images waited. A panic in fn is raised
// again in the caller's goroutine, the first in range order.
func inChunks(n int, fn func(lo, hi int) int) []int {
	parts := runtime.GOMAXPROCS(0)
	if n < chunkFrom || parts < 2 {
		return []int{fn(0, n)}
	}
	out := make([]int, parts)
	workers.Each(parts, func(p int) bool {
		out[p] = fn(n*p/parts, n*(p+1)/parts)
		return true
	})
	return out
}
