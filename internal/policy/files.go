package policy

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// LoadPaths reads policy files and directories (every .yaml, .yml and
// .json file below a directory) and loads them with [Load]. A path that
// does not exist or does not parse is a *ConfigError.
func LoadPaths(paths []string) (*Set, error) {
	return LoadAll(paths)
}

// LoadAll is [LoadPaths] with more sources (objects written inline in a
// config) loaded together with the files.
func LoadAll(paths []string, more ...Source) (*Set, error) {
	files, err := PolicyFiles(paths)
	if err != nil {
		return nil, err
	}
	sources := make([]Source, 0, len(files)+len(more))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, &ConfigError{Source: f, Err: err}
		}
		docs, err := kio.FromBytes(b)
		if err != nil {
			return nil, &ConfigError{Source: f, Err: fmt.Errorf("parse YAML: %w", contentFreeYAMLError(err))}
		}
		if len(docs) == 0 {
			return nil, &ConfigError{Source: f, Err: fmt.Errorf("no policy in the file")}
		}
		sources = append(sources, Source{Name: f, Docs: docs})
	}
	return Load(append(sources, more...)...)
}

// PolicyFiles expands directories into their YAML and JSON files, sorted.
func PolicyFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, &ConfigError{Source: p, Err: err}
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch strings.ToLower(filepath.Ext(path)) {
			case ".yaml", ".yml", ".json":
				if !d.IsDir() {
					found = append(found, path)
				}
			}
			return nil
		})
		if err != nil {
			return nil, &ConfigError{Source: p, Err: err}
		}
		if len(found) == 0 {
			return nil, &ConfigError{Source: p, Err: fmt.Errorf("no .yaml, .yml or .json file in the directory")}
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// InlineSources makes a source of each object written inline in a config's
// list of entries (field "spec.policies"), for [LoadAll].
func InlineSources(field string, es []config.Entry) ([]Source, error) {
	places, nodes, err := config.InlineNodes(field, es)
	if err != nil {
		return nil, &ConfigError{Source: field, Err: err}
	}
	out := make([]Source, len(nodes))
	for i, n := range nodes {
		out[i] = Source{Name: places[i], Docs: []*yaml.RNode{n}}
	}
	return out, nil
}
