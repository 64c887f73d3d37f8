package render

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
)

// Remote resources (--no-remote, spec.render.remote: deny). kustomize's
// krusty has no switch that forbids them: a resources: URL is fetched over
// HTTP by its file loader, and a git URL is cloned, before any file system
// or load restrictor is asked. So the gate reads the kustomization tree
// first — the top kustomization and every local kustomization its
// resources/components/bases reach — and refuses an entry that is not a
// local path, before kustomize runs.

// RemoteRef is an entry of a kustomization that names a remote resource.
type RemoteRef struct {
	Kustomization string // the kustomization file, as the caller named its directory
	Field         string // resources, components or bases
	Entry         string // the URL or repository as written
}

func (r RemoteRef) String() string {
	return fmt.Sprintf("%s: %s entry %q", r.Kustomization, r.Field, r.Entry)
}

// RemoteError refuses a render because its kustomizations name remote
// resources while they are denied.
type RemoteError struct {
	Dir  string
	Refs []RemoteRef
}

func (e *RemoteError) Error() string {
	refs := make([]string, len(e.Refs))
	for i, r := range e.Refs {
		refs[i] = r.String()
	}
	return fmt.Sprintf("rendering %s: remote resources are denied (--no-remote, spec.render.remote: deny), nothing was fetched: %s", e.Dir, strings.Join(refs, "; "))
}

// remotePrefixes are how kustomize recognises a remote repository or file
// by its start (its repospec parser and file loader).
var remotePrefixes = []string{"git::", "gh:", "ssh://", "https://", "http://", "file://", "git@", "github.com:", "github.com/"}

// maxKustomizationBytes bounds the read of one kustomization file.
const maxKustomizationBytes = 4 << 20

// RemoteRefs returns the remote entries of the kustomization at dir and
// of the local kustomizations it reaches. An entry is remote when it
// starts as a URL or repository does, or when it is no local path and
// reads as host/path (kustomize would clone it).
// Only kustomizations inside root (fsbound.Root.Resolve: as written and
// with their symlinks followed) are read.
func RemoteRefs(dir, root string) ([]RemoteRef, error) {
	r, err := fsbound.New(root, maxKustomizationBytes)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return remoteRefs(dir, func(p string) bool {
		_, err := r.Resolve(p)
		return err == nil
	})
}

// remoteRefs is RemoteRefs reading what readable allows.
func remoteRefs(dir string, readable func(string) bool) ([]RemoteRef, error) {
	w := &remoteWalk{seen: map[string]bool{}, readable: readable}
	if err := w.walk(dir, dir); err != nil {
		return nil, err
	}
	return w.refs, nil
}

type remoteWalk struct {
	seen map[string]bool
	refs []RemoteRef
	// readable says whether a directory or kustomization file may be
	// read (the render's boundary); one it refuses is not walked, and the
	// render refuses it by name.
	readable func(string) bool
}

func (w *remoteWalk) walk(dir, display string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", display, err)
	}
	if w.seen[abs] {
		return nil
	}
	w.seen[abs] = true
	if !w.readable(abs) {
		return nil
	}
	file, name := kustomizationFile(abs)
	if file == "" || !w.readable(file) {
		return nil // a directory of plain files, or a file: nothing remote
	}
	shown := filepath.Join(display, name)
	k, err := readKustomization(file, shown)
	if err != nil {
		return err
	}
	return w.entries(k, abs, display, shown)
}

// entries records the remote entries of a kustomization (read from shown,
// in directory abs) and walks its local ones.
func (w *remoteWalk) entries(k *yaml.RNode, abs, display, shown string) error {
	// Function configs (generators, transformers, validators) load through
	// the same loader as resources, once an entry is not inline YAML.
	for _, field := range []string{"resources", "components", "bases", "generators", "transformers", "validators"} {
		entries, err := k.Pipe(yaml.Lookup(field))
		if err != nil || entries == nil || entries.YNode().Kind != yaml.SequenceNode {
			continue
		}
		functions := field == "generators" || field == "transformers" || field == "validators"
		for _, e := range entries.YNode().Content {
			entry := e.Value
			if e.Kind != yaml.ScalarNode || entry == "" {
				continue
			}
			if _, inline := inlineEntry(entry); functions && inline {
				continue
			}
			local := entry
			if !filepath.IsAbs(local) {
				local = filepath.Join(abs, filepath.FromSlash(entry))
			}
			st, statErr := os.Stat(local)
			switch {
			case isRemoteEntry(entry, statErr == nil):
				w.refs = append(w.refs, RemoteRef{Kustomization: shown, Field: field, Entry: entry})
			case statErr == nil && st.IsDir():
				if err := w.walk(local, filepath.Join(display, filepath.FromSlash(entry))); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// editedRemoteRefs is RemoteRefs for a top-level kustomization as edited
// before the build (an Argo CD Application's kustomize overrides may add
// components, remote or local, that the file on disk does not name).
func editedRemoteRefs(k *yaml.RNode, dir, display, shown string, readable func(string) bool) ([]RemoteRef, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", display, err)
	}
	w := &remoteWalk{seen: map[string]bool{abs: true}, readable: readable}
	if err := w.entries(k, abs, display, shown); err != nil {
		return nil, err
	}
	return w.refs, nil
}

// isRemoteEntry: a URL or repository spec, or (when nothing local has the
// name) host.tld/path.
func isRemoteEntry(entry string, exists bool) bool {
	lower := strings.ToLower(entry)
	for _, p := range remotePrefixes {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	if exists || filepath.IsAbs(entry) || strings.HasPrefix(entry, ".") {
		return false
	}
	host, rest, ok := strings.Cut(entry, "/")
	return ok && rest != "" && strings.Contains(host, ".")
}

// kustomizationFile is the kustomization file kustomize reads in dir, and
// its name; "" when there is none.
func kustomizationFile(dir string) (string, string) {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, n
		}
	}
	return "", ""
}

// readKustomization reads a kustomization file: a regular file, bounded.
func readKustomization(path, shown string) (*yaml.RNode, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("reading %s: not a regular file", shown)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKustomizationBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	if len(data) > maxKustomizationBytes {
		return nil, fmt.Errorf("reading %s: larger than %d bytes", shown, maxKustomizationBytes)
	}
	if strings.TrimSpace(string(data)) == "" {
		return yaml.NewMapRNode(nil), nil
	}
	k, err := yaml.Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	return k, nil
}

// FileRemoteError is a kustomization entry naming a file:// repository:
// kustomize would have git clone it from this machine, a read outside
// the checkout that no load restrictor judges. It is refused in every
// mode, before anything is cloned.
type FileRemoteError struct {
	Ref RemoteRef
}

func (e *FileRemoteError) Error() string {
	return fmt.Sprintf("%s is a file:// repository: git would read it from this machine, outside the checkout; nothing was cloned (vendor it into the repository, or name it by https)", e.Ref)
}

// isFileRemote: kustomize clones the entry from a local path (file://,
// after the git:: prefix it strips).
func isFileRemote(entry string) bool {
	lower := strings.ToLower(entry)
	lower = strings.TrimPrefix(lower, "git::")
	return strings.HasPrefix(lower, "file://")
}

// CheckFileRemotes returns a *FileRemoteError for the first ref that
// names a file:// repository.
func CheckFileRemotes(refs []RemoteRef) error {
	for _, r := range refs {
		if isFileRemote(r.Entry) {
			return &FileRemoteError{Ref: r}
		}
	}
	return nil
}

// fileRemoteEntries returns a *FileRemoteError for the first entry of the
// kustomization k (read from shown) that names a file:// repository.
func fileRemoteEntries(k *yaml.RNode, shown string) error {
	for _, field := range []string{"resources", "components", "bases", "generators", "transformers", "validators"} {
		entries, err := k.Pipe(yaml.Lookup(field))
		if err != nil || entries == nil || entries.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range entries.YNode().Content {
			if e.Kind == yaml.ScalarNode && isFileRemote(e.Value) {
				return &FileRemoteError{Ref: RemoteRef{Kustomization: shown, Field: field, Entry: e.Value}}
			}
		}
	}
	return nil
}
