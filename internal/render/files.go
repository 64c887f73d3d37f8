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

	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// Stdin is the path that names standard input.
const Stdin = "-"

// ReaderAnnotations are the annotations the readers set; printers remove
// them.
var ReaderAnnotations = []string{kioutil.PathAnnotation, kioutil.IndexAnnotation, manifest.AnnoImageSources}

// Files reads rendered manifests from files, directories (their .yaml, .yml
// and .json files; subdirectories with recursive) and "-" for stdin. Each
// object carries its file path and index. A file that does not parse is an
// error naming it. Each input is read up to maxBytes (0:
// stream.DefaultMaxBytes); a larger one is a *stream.TooLargeError.
func Files(paths []string, stdin io.Reader, recursive bool, maxBytes int64) ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, p := range paths {
		nodes, err := readPath(p, stdin, recursive, maxBytes)
		if err != nil {
			return nil, err
		}
		out = append(out, nodes...)
	}
	return out, nil
}

func readPath(p string, stdin io.Reader, recursive bool, maxBytes int64) ([]*yaml.RNode, error) {
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
		return readFile(p, maxBytes)
	}
	files, err := manifestFiles(p, recursive)
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

// manifestFiles lists the manifest files of a directory, sorted.
func manifestFiles(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (!recursive || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
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
