package render

import (
	"bufio"
	"bytes"
	"path/filepath"
	"slices"
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
func Blame(r *yaml.RNode, value string) *finding.File {
	if value == "" {
		return nil
	}
	cache := map[string][]byte{}
	for _, f := range blameCandidates(r, cache) {
		if line := lineOf(read(f, cache), value); line > 0 {
			return &finding.File{Path: f, Line: line}
		}
	}
	return nil
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
