package render

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
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
	r := &reader{stdin: stdin, recursive: recursive, maxBytes: maxBytes}
	return r.paths(paths)
}

// FilesEach is Files for -f without -R, telling each of the objects as
// they are read (stream.ParseEach), numbered across the files in the
// order Files returns them.
// Read keeps what was read, for Again.
func FilesEach(paths []string, stdin io.Reader, maxBytes int64, each stream.Each) ([]*yaml.RNode, *Read, error) {
	r := &reader{stdin: stdin, maxBytes: maxBytes, each: each, kept: &Read{maxBytes: maxBytes}}
	nodes, err := r.paths(paths)
	return nodes, r.kept, err
}

// Read is what FilesEach read, file by file (stdin included), kept so
// that it can be parsed again whole: the caller that released objects as
// each judged them, and then finds it must judge the render whole.
type Read struct {
	inputs   []readInput
	maxBytes int64
}

// readInput is one file read, or stdin's bytes (file "").
type readInput struct {
	data []byte
	path string
	file string
}

// Again parses what was read once more, as Files would have returned it:
// the files read again (their bytes are not kept, a large render's
// memory being the point of releasing objects), stdin from its bytes.
func (r *Read) Again() ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, in := range r.inputs {
		data := in.data
		if in.file != "" {
			f, err := os.Open(in.file)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", in.file, err)
			}
			data, err = stream.ReadAll(f, r.maxBytes, in.file)
			f.Close()
			if err != nil {
				return nil, err
			}
		}
		nodes, err := Parse(data, in.path)
		if err != nil {
			return nil, err
		}
		out = append(out, nodes...)
	}
	return out, nil
}

// FilesAndRoots is Files for -R -f: a subdirectory (never a given
// directory itself) that is a kustomization root is not read raw but
// returned in roots, for the caller to render with kustomize — as Flux's
// kustomize-controller does with the kustomization it generates for a path
// that has none, and as `kubectl apply -k` would.
func FilesAndRoots(paths []string, stdin io.Reader, recursive bool, maxBytes int64) (nodes []*yaml.RNode, roots []string, err error) {
	r := &reader{stdin: stdin, recursive: recursive, maxBytes: maxBytes, roots: &[]string{}}
	nodes, err = r.paths(paths)
	return nodes, *r.roots, err
}

// FileError is one -f file that could not be read or parsed (the files
// of a directory, or a file named itself).
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// FilesPartial is Files (with recursive, FilesAndRoots) that goes on past
// a file that does not read or parse (*FileError): it returns what the
// other files hold and each such file's error, for the caller to report
// both; the run stays no verdict. A path that cannot be walked, or stdin,
// is err as for Files: stdin cannot be read twice.
func FilesPartial(paths []string, recursive bool, maxBytes int64) (nodes []*yaml.RNode, roots []string, bad []*FileError, err error) {
	r := &reader{recursive: recursive, maxBytes: maxBytes, bad: &bad}
	if recursive {
		r.roots = &[]string{}
	}
	for _, p := range paths {
		if p == Stdin {
			return nil, nil, nil, fmt.Errorf("reading stdin twice")
		}
	}
	nodes, err = r.paths(paths)
	if r.roots != nil {
		roots = *r.roots
	}
	return nodes, roots, bad, err
}

// reader reads -f inputs; read counts the objects read so far, so that
// each numbers them across files.
type reader struct {
	stdin     io.Reader
	recursive bool
	maxBytes  int64
	roots     *[]string
	each      stream.Each
	read      int
	kept      *Read // with each
	// bad, when set, collects the files that do not read or parse, and
	// the reader goes on (FilesPartial).
	bad *[]*FileError
	// seen are the files read, resolved: a file named again (a directory
	// and a file in it, -f d -f d/x.yaml) is read once, or its objects
	// would be a render-duplicate kubectl apply does not see.
	seen map[string]bool
}

func (r *reader) paths(paths []string) ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, p := range paths {
		nodes, err := r.path(p)
		if err != nil {
			return nil, err
		}
		out = append(out, nodes...)
	}
	return out, nil
}

func (r *reader) path(p string) ([]*yaml.RNode, error) {
	if p == Stdin {
		data, err := stream.ReadAll(r.stdin, r.maxBytes, "stdin")
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			// An empty pipe is most often a command before it that failed
			// (kustomize build … | kubectl gate check -f -): no verdict.
			return nil, fmt.Errorf("reading stdin: no input at all (did the command before the pipe fail?)")
		}
		if r.kept != nil {
			r.kept.inputs = append(r.kept.inputs, readInput{data: data, path: "<stdin>"})
		}
		return r.parse(data, "<stdin>")
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if !st.IsDir() {
		if IsKustomizationFile(p) {
			return nil, kustomizationInput(p, filepath.Dir(p))
		}
		return r.fileOrSkip(p)
	}
	files, err := manifestFiles(p, r.recursive, r.roots)
	if err != nil {
		return nil, err
	}
	var out []*yaml.RNode
	for _, f := range files {
		nodes, err := r.fileOrSkip(f)
		if err != nil {
			return nil, err
		}
		out = append(out, nodes...)
	}
	return out, nil
}

// fileOrSkip is file, as a *FileError; with bad set, that error is
// collected and the file holds nothing.
func (r *reader) fileOrSkip(path string) ([]*yaml.RNode, error) {
	if key, err := filepath.Abs(path); err == nil {
		if real, err := filepath.EvalSymlinks(key); err == nil {
			key = real
		}
		if r.seen[key] {
			return nil, nil
		}
		if r.seen == nil {
			r.seen = map[string]bool{}
		}
		r.seen[key] = true
	}
	nodes, err := r.file(path)
	if err == nil {
		return nodes, nil
	}
	fe := &FileError{Path: path, Err: err}
	if r.bad != nil {
		*r.bad = append(*r.bad, fe)
		return nil, nil
	}
	return nil, fe
}

func (r *reader) file(path string) ([]*yaml.RNode, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	data, err := stream.ReadAll(f, r.maxBytes, path)
	if err != nil {
		return nil, err
	}
	if r.kept != nil {
		r.kept.inputs = append(r.kept.inputs, readInput{path: filepath.ToSlash(path), file: path})
	}
	return r.parse(data, filepath.ToSlash(path))
}

// parse is Parse, telling each of the objects (numbered from those read
// before) when set.
func (r *reader) parse(data []byte, path string) ([]*yaml.RNode, error) {
	var each stream.Each
	if r.each != nil {
		base := r.read
		each = func(first int, objs []*yaml.RNode) { r.each(base+first, objs) }
	}
	// What a check keeps grows with the input it reads, and so does the
	// heap the collector waits for (gcfloor.InputFactor); Read.Again's
	// second reading of the same input is not counted again.
	gcfloor.Input(len(data))
	nodes, err := parseEach(data, path, each)
	r.read += len(nodes)
	return nodes, err
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
//
// A symlink the walk meets (the directory itself is the caller's) in a
// repository must lead inside the repository holding dir: one whose target
// leaves it is an *fsbound.EscapeError naming it, and nothing is read, as
// a pull request adds such links. Links that stay inside (a ConfigMap
// mount's ..data) are read as the files they name.
func manifestFiles(dir string, recursive bool, roots *[]string) ([]string, error) {
	inRepository := func(dir string) bool { _, ok := fsbound.Repository(dir); return ok }
	var files []string
	var bound *fsbound.Root
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
			if d.Type()&fs.ModeSymlink != 0 && inRepository(dir) {
				if bound == nil {
					if bound, err = fsbound.New(shown(fsbound.For(dir)), 0); err != nil {
						return err
					}
				}
				if err := bound.Link(p); err != nil {
					return err
				}
			}
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
