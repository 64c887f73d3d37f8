package render

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// Blame names the file that set a value of a rendered object, and the line
// that holds it: the patch files of the kustomizations whose transformers
// ran over the object, the last applied first (strategic merge, JSON 6902
// and patches: entries, replacements, components alike), then those
// kustomization files themselves (inline patches, images:, generators),
// then the object's own source file. It returns nil when no file holds the
// value as written, and reads only files the render named.
//
// A file is taken to hold the value only where it writes it at the
// field's path (fieldPath, as field.Path writes it) in a document about
// the object: its source or a strategic-merge patch of its kind and name
// (a list's item matched by the name of the rendered item, as a merge
// matches it), or a JSON 6902 operation whose path leads to the field. Two
// containers with one image, or one image in several objects of a file,
// each get their own line; a value the file writes elsewhere blames
// nothing there, and a value the render does not hold at fieldPath (a
// finding about a missing field that names what is missing) nothing at
// all. A kustomization file, whose inline patches are text, and
// a file that does not parse as YAML are searched for the value's first
// line, as written.
func Blame(r *yaml.RNode, fieldPath, value string) *finding.File {
	return NewBlamer().Blame(r, fieldPath, value)
}

// Blamer is Blame with the files it read and parsed kept for the next
// object (a unit's findings); not safe for concurrent use.
type Blamer struct {
	data map[string][]byte
	docs map[string][]*yaml.Node // nil: not YAML
}

// NewBlamer returns an empty Blamer.
func NewBlamer() *Blamer {
	return &Blamer{data: map[string][]byte{}, docs: map[string][]*yaml.Node{}}
}

// Blame is [Blame].
func (b *Blamer) Blame(r *yaml.RNode, fieldPath, value string) *finding.File {
	if value == "" {
		return nil
	}
	steps := yamlpath.Steps(r.YNode(), fieldPath)
	if len(steps) == 0 {
		return nil
	}
	if last := steps[len(steps)-1].Node; last.Kind != yaml.ScalarNode || last.Value != value {
		// A finding about a map or list that names one value in it
		// (requests: {cpu: "2"}) blames that value.
		below, ok := only(last, value, 2)
		if !ok {
			return nil // the render does not hold value there: no file set it there
		}
		steps = append(steps, below...)
	}
	for _, f := range blameCandidates(r, b.data) {
		data := read(f, b.data)
		docs, parsed := b.parse(f, data)
		if !parsed || isKustomization(f, docs) {
			if line := lineOf(data, value); line > 0 {
				return &finding.File{Path: f, Line: line}
			}
			continue
		}
		for _, d := range docs {
			if n := holds(d, r.YNode(), steps, value); n != nil {
				return &finding.File{Path: f, Line: n.Line}
			}
		}
	}
	return nil
}

// parse reads a file's YAML documents once; parsed is false for a file
// that is not YAML.
func (b *Blamer) parse(path string, data []byte) (docs []*yaml.Node, parsed bool) {
	if docs, ok := b.docs[path]; ok {
		return docs, docs != nil
	}
	docs = []*yaml.Node{}
	d := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := d.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			docs = nil
			break
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			docs = append(docs, n.Content[0])
		}
	}
	b.docs[path] = docs
	return docs, docs != nil
}

// isKustomization: a kustomization file, whose inline patches and
// replacements are text the documents do not show.
func isKustomization(path string, docs []*yaml.Node) bool {
	switch filepath.Base(path) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	for _, d := range docs {
		if strings.HasPrefix(yamlpath.String(d, "apiVersion"), "kustomize.config.k8s.io/") {
			return true
		}
	}
	return false
}

// holds returns the node of doc that writes value at the rendered field
// steps lead to: doc is the object's source or a strategic-merge patch of
// it (its kind and a name the rendered one contains; a patch a target
// selects may name neither), or a list of JSON 6902 operations.
func holds(doc, obj *yaml.Node, steps []yamlpath.Step, value string) *yaml.Node {
	doc = deref(doc)
	switch doc.Kind {
	case yaml.MappingNode:
		if kind := yamlpath.String(doc, "kind"); kind != "" && kind != yamlpath.String(obj, "kind") {
			return nil
		}
		if name := yamlpath.String(doc, "metadata.name"); name != "" && !strings.Contains(yamlpath.String(obj, "metadata.name"), name) {
			return nil
		}
		return follow(doc, steps, value)
	case yaml.SequenceNode:
		for _, op := range doc.Content {
			op = deref(op)
			if op.Kind != yaml.MappingNode {
				continue
			}
			ptr, val := yamlpath.Field(op, "path"), yamlpath.Field(op, "value")
			if ptr == nil || val == nil || ptr.Kind != yaml.ScalarNode {
				continue
			}
			if k, ok := pointerPrefix(ptr.Value, steps); ok {
				if n := follow(val, steps[k:], value); n != nil {
					return n
				}
			}
		}
	}
	return nil
}

// follow walks doc along the rendered field's steps, a list's item matched
// by the name of the rendered item (how a strategic merge matches
// containers, env, volumes…), else by its index, and returns the scalar
// that holds value at the end, or nil.
func follow(doc *yaml.Node, steps []yamlpath.Step, value string) *yaml.Node {
	n := deref(doc)
	for _, s := range steps {
		var next *yaml.Node
		switch {
		case s.Index < 0 && n.Kind == yaml.MappingNode:
			next = yamlpath.Field(n, s.Key)
		case s.Index >= 0 && n.Kind == yaml.SequenceNode:
			if name := yamlpath.String(s.Node, "name"); name != "" {
				for _, item := range n.Content {
					if yamlpath.String(deref(item), "name") == name {
						next = item
						break
					}
				}
			} else if s.Index < len(n.Content) {
				next = n.Content[s.Index]
			}
		}
		if next == nil {
			return nil
		}
		n = deref(next)
	}
	if n.Kind == yaml.ScalarNode && n.Value == value {
		return n
	}
	return nil
}

// pointerPrefix matches a JSON pointer ("/spec/template/spec/containers/0")
// against the first steps of the rendered field: each key the same, each
// index the same or "-" (appended); k is how many steps it covers.
func pointerPrefix(ptr string, steps []yamlpath.Step) (k int, ok bool) {
	if !strings.HasPrefix(ptr, "/") {
		return 0, false
	}
	segs := strings.Split(ptr[1:], "/")
	if len(segs) > len(steps) {
		return 0, false
	}
	for i, seg := range segs {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		s := steps[i]
		switch {
		case s.Index < 0 && seg == s.Key:
		case s.Index >= 0 && (seg == "-" || seg == strconv.Itoa(s.Index)):
		default:
			return 0, false
		}
	}
	return len(segs), true
}

// only returns the steps from n to the one scalar within depth levels of
// it that is value; ok is false for none, or more than one.
func only(n *yaml.Node, value string, depth int) (steps []yamlpath.Step, ok bool) {
	n = deref(n)
	if depth == 0 || n == nil {
		return nil, false
	}
	found := 0
	try := func(s yamlpath.Step) {
		v := deref(s.Node)
		if v.Kind == yaml.ScalarNode {
			if v.Value == value {
				found++
				steps = []yamlpath.Step{s}
			}
			return
		}
		if below, ok := only(v, value, depth-1); ok {
			found++
			steps = append([]yamlpath.Step{s}, below...)
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			try(yamlpath.Step{Key: n.Content[i].Value, Index: -1, At: n.Content[i], Node: n.Content[i+1]})
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			try(yamlpath.Step{Index: i, At: item, Node: item})
		}
	}
	return steps, found == 1
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// FilesRead lists, sorted, the files Blame reads for the objects: the files
// they came from and the kustomizations and patch files of the
// transformers that ran over them. Each file is read once.
func FilesRead(resources []*yaml.RNode) []string {
	cache := map[string][]byte{}
	var out []string
	for _, r := range resources {
		for _, f := range blameCandidates(r, cache) {
			if i, ok := slices.BinarySearch(out, f); !ok {
				out = slices.Insert(out, i, f)
			}
		}
	}
	return out
}

func blameCandidates(r *yaml.RNode, cache map[string][]byte) []string {
	var out []string
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	kusts := transformedIn(r)
	for i := len(kusts) - 1; i >= 0; i-- {
		for _, p := range patchFiles(kusts[i], read(kusts[i], cache)) {
			add(p)
		}
		add(kusts[i])
	}
	if src := manifest.SourceFile(r); src != nil {
		add(src.Path)
	}
	return out
}

// transformedIn lists the kustomization files of every transformer that ran
// over the object, in order (kustomize's transformations annotation).
func transformedIn(r *yaml.RNode) []string {
	t := yamlpath.Annotation(r.YNode(), manifest.AnnoTransformations)
	if t == "" {
		return nil
	}
	var list []struct {
		ConfiguredIn string `yaml:"configuredIn"`
	}
	if err := yaml.Unmarshal([]byte(t), &list); err != nil {
		return nil
	}
	var out []string
	for _, e := range list {
		if e.ConfiguredIn != "" && !slices.Contains(out, e.ConfiguredIn) {
			out = append(out, e.ConfiguredIn)
		}
	}
	return out
}

// patchFiles lists the files a kustomization's patches and replacements
// name, relative to where the gate runs.
func patchFiles(kust string, data []byte) []string {
	n, err := yaml.Parse(string(data))
	if err != nil || n == nil {
		return nil
	}
	dir := filepath.Dir(kust)
	var out []string
	for _, key := range []string{"patches", "patchesJson6902", "replacements", "patchesStrategicMerge"} {
		list := yamlpath.Field(n.YNode(), key)
		if list == nil || list.Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range list.Content {
			p := ""
			switch {
			case e.Kind == yaml.ScalarNode && !strings.Contains(e.Value, "\n"):
				p = e.Value // patchesStrategicMerge: a path or an inline patch
			case e.Kind == yaml.MappingNode:
				p = yamlpath.String(e, "path")
			}
			if p != "" {
				out = append(out, filepath.ToSlash(filepath.Join(dir, p)))
			}
		}
	}
	return out
}

// maxBlameBytes bounds a file blame reads to find a line.
const maxBlameBytes = 16 << 20

func read(path string, cache map[string][]byte) []byte {
	if b, ok := cache[path]; ok {
		return b
	}
	// The path comes from an origin annotation: read it only as a bounded
	// regular file (a forged annotation naming /dev/zero or a FIFO reads
	// as nothing).
	var b []byte
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		b, _ = fsbound.ReadRegular(resolved, path, maxBlameBytes)
	}
	cache[path] = b
	return b
}

// lineOf returns the 1-based line holding value as a YAML scalar ("key:
// value", "- value", quoted or not), or 0.
func lineOf(data []byte, value string) int {
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	quoted, keyed := `"`+value+`"`, ": "+value
	for n := 1; s.Scan(); n++ {
		raw := s.Text()
		if strings.Contains(raw, quoted) || strings.Contains(raw, keyed+",") || strings.Contains(raw, keyed+"}") {
			return n // a flow mapping: {name: web, image: "…"}
		}
		line := strings.TrimSpace(raw)
		if i := strings.Index(line, "#"); i >= 0 && (i == 0 || line[i-1] == ' ') {
			line = strings.TrimSpace(line[:i])
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "- "))
		if _, v, ok := strings.Cut(line, ": "); ok {
			line = strings.TrimSpace(v)
		}
		line = strings.Trim(line, `"'`)
		if line == value {
			return n
		}
	}
	return 0
}
