package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
)

// A Directory source is read as Argo CD's repo-server reads it
// (argo-cd v3.6 reposerver/repository/repository.go: findManifests,
// getPotentiallyValidManifests, getPotentiallyValidManifestFile,
// getObjsFromYAMLOrJSON; docs/user-guide/directory.md):
//
//   - every file of the directory, and with recurse every file below it;
//     hidden files and directories are no exception (.hidden.yaml and
//     .dot/x.yaml are applied, so they are checked);
//   - a file counts when its name ends in .yaml, .yml, .json or .jsonnet,
//     case-sensitively, unless disableExtensionFilter turns that test off;
//   - a symlink counts for the regular file it points at; a symlink to
//     anything else, or to nothing, is skipped;
//   - exclude, then include, are gobwas/glob patterns matched against the
//     path relative to the source, with no separator: * crosses /;
//   - a file holding "+argocd:skip-file-rendering" is skipped;
//   - a YAML file whose first document is not a Kubernetes object and that
//     does not hold all of "apiVersion:", "kind:" and "metadata:" is not a
//     manifest and is skipped (.argocd-source.yaml, CI configuration);
//   - jsonnet is evaluated by Argo CD, never by the gate: a source holding
//     it is not rendered (a *SkipError).

// manifestFile is Argo CD's extension test (repository.go manifestFile).
var manifestFile = regexp.MustCompile(`^.*\.(yaml|yml|json|jsonnet)$`)

// skipFileRenderingMarker marks a file Argo CD does not render.
const skipFileRenderingMarker = "+argocd:skip-file-rendering"

// argoDirectory is the directory: field of a source.
type argoDirectory struct {
	recurse, disableExtensionFilter bool
	include, exclude                glob.Glob
}

func readArgoDirectory(dir *yaml.RNode) (argoDirectory, error) {
	var d argoDirectory
	if dir == nil {
		return d, nil
	}
	var err error
	if d.recurse, err = dirBool(dir, "recurse"); err != nil {
		return d, err
	}
	if d.disableExtensionFilter, err = dirBool(dir, "disableExtensionFilter"); err != nil {
		return d, err
	}
	if d.include, err = dirGlob(dir, "include"); err != nil {
		return d, err
	}
	d.exclude, err = dirGlob(dir, "exclude")
	return d, err
}

// dirBool reads a boolean field as kubectl and the argocd CLI would turn
// the YAML into JSON: YAML 1.1, where yes and on are true (go.yaml.in/yaml/v2
// resolve.go, used by sigs.k8s.io/yaml).
func dirBool(dir *yaml.RNode, name string) (bool, error) {
	v := dirField(dir, name)
	switch v {
	case "", "~", "null", "Null", "NULL", "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false, nil
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true, nil
	}
	return false, fmt.Errorf("directory.%s: %q is not a boolean", name, v)
}

func dirField(dir *yaml.RNode, name string) string {
	if dir == nil || dir.Field(name) == nil {
		return ""
	}
	return yaml.GetValue(dir.Field(name).Value)
}

// dirGlob compiles include or exclude as Argo CD does (util/glob: gobwas/glob
// with no separators). Argo CD logs a pattern that does not compile and
// matches nothing with it; the gate refuses it.
func dirGlob(dir *yaml.RNode, name string) (glob.Glob, error) {
	pattern := dirField(dir, name)
	if pattern == "" {
		return nil, nil
	}
	g, err := glob.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("directory.%s %q: %w", name, pattern, err)
	}
	return g, nil
}

// directoryManifests reads the objects of a Directory source, each file up
// to maxFileBytes (--max-input-bytes; 0: fsbound.DefaultMaxFileBytes).
func (s *ArgoSource) directoryManifests(maxFileBytes int64) ([]*yaml.RNode, error) {
	d, err := readArgoDirectory(s.Directory)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", s.Dir, err)
	}
	files, err := d.files(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", s.Dir, err)
	}
	var out []*yaml.RNode
	for _, f := range files {
		nodes, err := readArgoManifest(s.Dir, f, maxFileBytes)
		if err != nil {
			return nil, err
		}
		out = append(out, nodes...)
	}
	return out, nil
}

// files lists the candidate files under root in Argo CD's walk order
// (lexical, a directory's files where its name sorts).
func (d argoDirectory) files(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != root && !d.recurse {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.disableExtensionFilter && !manifestFile.MatchString(e.Name()) {
			return nil
		}
		// os.Stat follows a symlink (the checkout's symlinks were checked
		// to stay inside it before the render); a link to nothing or to a
		// directory, a FIFO or a device is skipped as Argo CD skips it.
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) || err == nil && !st.Mode().IsRegular() {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.exclude != nil && d.exclude.Match(rel) || d.include != nil && !d.include.Match(rel) {
			return nil
		}
		files = append(files, p)
		return nil
	})
	return files, err
}

// readArgoManifest reads one candidate file of a Directory source: a
// regular file (opened without blocking, checked as opened) of at most
// maxFileBytes.
func readArgoManifest(root, path string, maxFileBytes int64) ([]*yaml.RNode, error) {
	rel, _ := filepath.Rel(root, path)
	rel = filepath.ToSlash(rel)
	if maxFileBytes <= 0 {
		maxFileBytes = fsbound.DefaultMaxFileBytes
	}
	data, err := fsbound.ReadRegular(path, path, maxFileBytes)
	if err != nil {
		return nil, err
	}
	switch {
	case bytes.Contains(data, []byte(skipFileRenderingMarker)):
		return nil, nil
	case strings.HasSuffix(path, ".jsonnet"):
		return nil, &SkipError{Reason: "jsonnet (" + rel + "): the gate does not evaluate jsonnet"}
	}
	nodes, err := Parse(data, filepath.ToSlash(path))
	var ue *config.UsageError
	switch {
	case err == nil:
		return nodes, nil
	case errors.As(err, &ue):
		// Argo CD applies a kustomization read as a manifest (and fails the
		// sync): no verdict, not the usage error -f gives.
		return nil, fmt.Errorf("%s: %w", ue.Where, ue.Err)
	case !strings.HasSuffix(path, ".json") && notAManifest(data):
		return nil, nil
	}
	return nil, err
}

// notAManifest is Argo CD's test for a YAML file it ignores
// (getObjsFromYAMLOrJSON): its first document does not decode as an
// object with a kind, and it lacks one of apiVersion:, kind: and metadata:.
func notAManifest(data []byte) bool {
	if bytes.Contains(data, []byte("apiVersion:")) && bytes.Contains(data, []byte("kind:")) && bytes.Contains(data, []byte("metadata:")) {
		return false
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u)
		switch {
		case errors.Is(err, io.EOF):
			return false // Argo CD reads every document: the gate's error stands
		case err != nil:
			return true
		case u != nil:
			return false // a document decoded first: Argo CD fails the sync
		}
	}
}
