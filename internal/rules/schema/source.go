package schema

import (
	"path/filepath"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// Sources holds the source files a run's findings point into, each read
// and parsed once; safe for concurrent use.
type Sources struct {
	mu    sync.Mutex
	files map[string][]*yaml.RNode // nil: unreadable or not a stream of objects
}

// maxSourceBytes bounds a source file read to find a line.
const maxSourceBytes = 16 << 20

// objects parses the source file at path. within, when set, is a file
// the gate read itself (-f): the source must lie in that file's repository
// (fsbound.For), symlinks followed, since what names it is content a pull
// request controls; a kustomize render's origin is kustomize's own.
func (s *Sources) objects(path, within string) []*yaml.RNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := path + "\x00" + within
	if objs, ok := s.files[key]; ok {
		return objs
	}
	var objs []*yaml.RNode
	// The path comes from an annotation of the render: read it only as a
	// bounded regular file (one naming /dev/zero or a FIFO reads as
	// nothing), and take from it only line numbers.
	if data, err := readSource(path, within); err == nil {
		// A file kustomize read, read as kustomize reads it (YAML 1.2: a
		// key on is "on" in its render).
		objs, _ = stream.ParseAsKustomize(data, path)
	}
	s.files[key] = objs
	return objs
}

func readSource(path, within string) ([]byte, error) {
	if within == "" {
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, err
		}
		return fsbound.ReadRegular(resolved, path, maxSourceBytes)
	}
	root, err := fsbound.New(fsbound.For(filepath.Dir(within)), maxSourceBytes)
	if err != nil {
		return nil, err
	}
	return root.ReadFile(path)
}

// place names the file an object came from and the line there that holds
// a field (its path as the API server writes it), or the nearest enclosing
// field that is written there ("Required value" names a missing one). The
// line comes
//   - for -f, from the parsed stream itself: the object's nodes keep their
//     lines in the file;
//   - for a kustomize render, from the file kustomize's origin annotation
//     names, the object found there by kind and name (namePrefix and
//     nameSuffix allowed for).
//
// A Helm template, a generated object (its origin names only the
// kustomization) or a file that no longer parses gives the file alone.
func place(c *rules.Context, n *yaml.RNode, fieldPath string) *finding.File {
	return rules.Memo(c, "schema-sources", NewSources).Place(n, fieldPath)
}

// NewSources returns an empty Sources.
func NewSources() *Sources { return &Sources{files: map[string][]*yaml.RNode{}} }

// Place is place with the source files s holds: the file an object came
// from, with the line of the field where the gate can find it.
func (s *Sources) Place(n *yaml.RNode, fieldPath string) *finding.File {
	f := manifest.SourceFile(n)
	if f == nil {
		return nil
	}
	if doc := s.sourceDoc(n, f.Path); doc != nil {
		f.Line = yamlpath.LineOf(doc, fieldPath)
	}
	return f
}

// sourceDoc returns the node of the object as its source file holds it.
func (s *Sources) sourceDoc(n *yaml.RNode, path string) *yaml.Node {
	if yamlpath.Annotation(n.YNode(), manifest.AnnoHelmSource) != "" {
		return nil // a template, not YAML
	}
	if o := yamlpath.Annotation(n.YNode(), manifest.AnnoOrigin); o != "" {
		var origin struct {
			Path string `yaml:"path"`
			Repo string `yaml:"repo"`
		}
		if err := yaml.Unmarshal([]byte(o), &origin); err != nil || origin.Path != path || origin.Repo != "" {
			return nil // generated, or from a remote repository
		}
		read, _ := manifest.FileAnnotations(n) // set: an object of a file the gate read
		return match(s.objects(path, read), n)
	}
	return manifest.StreamDoc(n, path)
}

// match finds the rendered object among a source file's objects: the same
// kind, and the longest name the rendered one contains (namePrefix and
// nameSuffix add to it); else the file's only object of that kind.
func match(objs []*yaml.RNode, n *yaml.RNode) *yaml.Node {
	kind, name := manifest.Kind(n), manifest.Name(n)
	var best, only *yaml.Node
	bestLen, ofKind := -1, 0
	for _, o := range objs {
		if manifest.Kind(o) != kind {
			continue
		}
		ofKind++
		only = o.YNode()
		on := manifest.Name(o)
		if on != "" && strings.Contains(name, on) && len(on) > bestLen {
			best, bestLen = o.YNode(), len(on)
		}
	}
	switch {
	case best != nil:
		return best
	case ofKind == 1:
		return only
	}
	return nil
}
