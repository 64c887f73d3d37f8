package render

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// Stdin is the path that names standard input.
const Stdin = "-"

// ReaderAnnotations are the annotations the readers and the Helm renderer
// set; printers remove them.
var ReaderAnnotations = []string{kioutil.PathAnnotation, kioutil.IndexAnnotation, manifest.AnnoImageSources, manifest.AnnoHelmSource}

// Files reads rendered manifests from files, directories (their .yaml, .yml
// and .json files; subdirectories with recursive) and "-" for stdin. Each
// object carries its file path and index. A file that does not parse is an
// error naming it. Each input is read up to maxBytes (0:
// stream.DefaultMaxBytes); a larger one is a *stream.TooLargeError.
func Files(paths []string, stdin io.Reader, recursive bool, maxBytes int64) ([]*yaml.RNode, error) {
	return readPaths(paths, stdin, recursive, maxBytes, nil)
}

// FilesAndRoots is Files for -R -f: a subdirectory (never a given
// directory itself) that is a kustomization root is not read raw but
// returned in roots, for the caller to render with kustomize — as Flux's
// kustomize-controller does with the kustomization it generates for a path
// that has none, and as `kubectl apply -k` would.
func FilesAndRoots(paths []string, stdin io.Reader, recursive bool, maxBytes int64) (nodes []*yaml.RNode, roots []string, err error) {
	roots = []string{}
	nodes, err = readPaths(paths, stdin, recursive, maxBytes, &roots)
	return nodes, roots, err
}

func readPaths(paths []string, stdin io.Reader, recursive bool, maxBytes int64, roots *[]string) ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, p := range paths {
		nodes, err := readPath(p, stdin, recursive, maxBytes, roots)
		if err != nil {
			return nil, err
		}
		out = append(out, nodes...)
	}
	return out, nil
}

func readPath(p string, stdin io.Reader, recursive bool, maxBytes int64, roots *[]string) ([]*yaml.RNode, error) {
	if p == Stdin {
		data, err := stream.ReadAll(stdin, maxBytes, "stdin")
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			// An empty pipe is most often a command before it that failed
			// (kustomize build … | kubectl gate check -f -): no verdict.
			return nil, fmt.Errorf("reading stdin: no input at all (did the command before the pipe fail?)")
		}
		return Parse(data, "<stdin>")
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if !st.IsDir() {
		if IsKustomizationFile(p) {
			return nil, kustomizationInput(p, filepath.Dir(p))
		}
		return readFile(p, maxBytes)
	}
	files, err := manifestFiles(p, recursive, roots)
	if err != nil {
		return nil, err
	}
	var out []*yaml.RNode
	for _, f := range files {
		nodes, err := readFile(f, maxBytes)
		if err != nil {
			return nil, err
		}
		out = append(out, nodes...)
	}
	return out, nil
}

func readFile(path string, maxBytes int64) ([]*yaml.RNode, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	data, err := stream.ReadAll(f, maxBytes, path)
	if err != nil {
		return nil, err
	}
	return Parse(data, filepath.ToSlash(path))
}

// kustomizationFiles are the file names kustomize reads as a kustomization.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// IsKustomizationFile reports whether a path names a kustomization file.
func IsKustomizationFile(p string) bool {
	base := filepath.Base(p)
	for _, k := range kustomizationFiles {
		if base == k {
			return true
		}
	}
	return false
}

// kustomizationIn returns the kustomization file of dir, or "".
func kustomizationIn(dir string) string {
	for _, k := range kustomizationFiles {
		if st, err := os.Stat(filepath.Join(dir, k)); err == nil && !st.IsDir() {
			return filepath.Join(dir, k)
		}
	}
	return ""
}

// kustomizationInput is the usage error for -f on a kustomization.
func kustomizationInput(file, dir string) error {
	return &config.UsageError{Where: "-f " + filepath.ToSlash(file), Err: fmt.Errorf(
		"%s is a kustomization, not rendered manifests: its patches and transformer configs would be checked as resources and its render never would; use -k %s", filepath.ToSlash(file), filepath.ToSlash(dir))}
}

// manifestFiles lists the manifest files of a directory, sorted. With
// roots, a nested kustomization root is listed there instead of refused.
//
// It reads at least what kubectl apply -f DIR [-R] applies
// (k8s.io/cli-runtime's ExpandPathsToFileVisitors): every file named
// *.yaml, *.yml or *.json directly in DIR, and with -R in every directory
// below it. Names starting with a dot are no exception, files or
// directories (.hidden.yaml, .dot/pod.yaml): kubectl applies them, so the
// gate judges them. Extensions are matched case-insensitively, which reads
// a .YAML file kubectl would skip: more judged, never less.
func manifestFiles(dir string, recursive bool, roots *[]string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && !recursive {
				return filepath.SkipDir
			}
			// A kustomization root holds patch fragments and transformer
			// configs, not rendered objects: read raw, they would be checked
			// as resources and the real render never would.
			if root := kustomizationIn(p); root != "" {
				if roots != nil && p != dir {
					*roots = append(*roots, p)
					return filepath.SkipDir
				}
				return kustomizationInput(root, p)
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	sort.Strings(files)
	return files, nil
}

// IsKustomizeConfig reports the apiVersions of kustomize's own configuration
// (Kustomization, Component, builtin transformer and generator configs):
// never resources.
func IsKustomizeConfig(apiVersion string) bool {
	return apiVersion == "builtin" || strings.HasPrefix(apiVersion, "kustomize.config.k8s.io/")
}
