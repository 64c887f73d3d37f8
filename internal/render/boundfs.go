package render

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// boundFS is the disk as kustomize reads it through the gate's filesystem
// boundary (internal/fsbound): every file kustomize reads must be a
// regular file within the per-file cap (--max-input-bytes, which bounds -f
// the same way), so a FIFO waits for nothing and /dev/zero or a 700 MB
// resource is refused by name before it is read.
//
// Nothing outside the root is read, as written or through a symlink:
// kustomize resolves a directory's symlinks itself (CleanedAbs) before it
// reads the files in it, so the directories it confirms are checked too,
// and a directory symlink out of the root is named where kustomize meets
// it. A path outside the root (a base named with ../ that leaves the
// repository, an absolute path) is refused by name unless outside is set
// (--load-restrictor LoadRestrictionsNone, kustomize's own opt-in to read
// anywhere; never for an Argo CD or Flux source under --apps-root), or no
// repository holds the kustomization (no checkout to keep it in). The
// one exception is kustomize's own clone of a remote base: a kustomize-
// directory it made in the temporary directory during this render, read
// through a boundary of its own (kustomize also keeps such a clone's
// reads inside it).
type boundFS struct {
	filesys.FileSystem
	root *fsbound.Root
	// outside allows reads outside the root.
	outside bool
	// hint is said after a refusal of a path outside the root.
	hint string
	// tmp is the temporary directory, resolved, and before the kustomize-
	// directories it held when the render started; "" when no remote
	// base is to be cloned.
	tmp    string
	before map[string]bool

	mu  sync.Mutex
	err error // the first refusal: reported instead of kustomize's words
}

// boundOptions are how a render's boundary is drawn.
type boundOptions struct {
	root         string // fsbound.For(dir) when empty
	maxFileBytes int64
	outside      bool
	confined     bool // an --apps-root source: the hint names it
}

func newBoundFS(dir string, o boundOptions) (*boundFS, error) {
	root := o.root
	if root == "" {
		root = fsbound.For(dir)
	}
	r, err := fsbound.New(shown(root), o.maxFileBytes)
	if err != nil {
		return nil, err
	}
	b := &boundFS{FileSystem: filesys.MakeFsOnDisk(), root: r, outside: o.outside}
	if _, repo := fsbound.Repository(dir); o.root == "" && !repo {
		// No repository holds the kustomization (a tarball, a build
		// context without .git): there is no checkout to keep the render
		// in, and kustomize's own load restrictor judges its bases, as
		// before; the boundary still reads only regular files, bounded.
		b.outside = true
	}
	switch {
	case o.confined:
		b.hint = " (an Argo CD or Flux source is rendered from the --apps-root checkout alone)"
	case !o.outside:
		b.hint = " (hint: --load-restrictor LoadRestrictionsNone lets the render read outside the repository)"
	}
	return b, nil
}

// shown is path relative to the working directory when it lies below it,
// as messages name paths; else path.
func shown(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && (rel == "." || filepath.IsLocal(rel)) {
		return rel
	}
	return path
}

// allowClones lets the render read kustomize's clones of remote bases
// (made after this call).
func (b *boundFS) allowClones() {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return
	}
	b.tmp, b.before = tmp, map[string]bool{}
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "kustomize-") {
			b.before[e.Name()] = true
		}
	}
}

// within returns the boundary path is read through: the root, or a
// clone's; nil when path lies outside every one and outside reads are
// allowed. A path outside every one otherwise is an *fsbound.OutsideError.
func (b *boundFS) within(path string) (*fsbound.Root, error) {
	if b.root.Inside(path) {
		return b.root, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", path, err)
	}
	if b.tmp != "" {
		if rel, err := filepath.Rel(b.tmp, abs); err == nil && filepath.IsLocal(rel) {
			first := strings.Split(rel, string(filepath.Separator))[0]
			if strings.HasPrefix(first, "kustomize-") && !b.before[first] {
				return fsbound.New(filepath.Join(b.tmp, first), b.root.MaxFileBytes())
			}
		}
	}
	if b.outside {
		return nil, nil
	}
	return nil, &fsbound.OutsideError{Root: b.root.Dir(), Path: shown(path)}
}

// check is the boundary's verdict on reading path (a file or a
// directory), without recording it: a path that does not exist passes,
// for kustomize to report.
func (b *boundFS) check(path string) error {
	r, err := b.within(path)
	if err != nil || r == nil {
		return err
	}
	if _, err := r.Resolve(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// explain adds the hint to a refusal of a path outside the root.
func (b *boundFS) explain(err error) error {
	var outside *fsbound.OutsideError
	if errors.As(err, &outside) {
		return fmt.Errorf("%w%s", err, b.hint)
	}
	return err
}

// refused records err when it is the boundary's refusal (explained).
func (b *boundFS) refused(err error) error {
	var escape *fsbound.EscapeError
	var outside *fsbound.OutsideError
	if !errors.As(err, &outside) && !errors.As(err, &escape) {
		return err
	}
	err = b.explain(err)
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	return err
}

// Err is the first read the boundary refused, or nil.
func (b *boundFS) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// CleanedAbs is how kustomize confirms a directory (a base, a component,
// the kustomization's own) and finds a file's directory: it resolves the
// path's symlinks, so the path is checked before they are.
func (b *boundFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if err := b.check(path); err != nil {
		return "", "", b.refused(err)
	}
	return b.FileSystem.CleanedAbs(path)
}

// ReadFile reads path through the boundary.
// A YAML file with an alias kustomize's reader cannot expand (a cycle, or
// a "billion laughs") is refused by name: kyaml would recurse until the
// stack overflows, or expand without bound.
func (b *boundFS) ReadFile(path string) ([]byte, error) {
	data, err := b.read(path)
	if err != nil {
		return nil, b.refused(err)
	}
	if err := stream.CheckAliases(data); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}

func (b *boundFS) read(path string) ([]byte, error) {
	r, err := b.within(path)
	if err != nil {
		return nil, err
	}
	if r != nil {
		return r.ReadFile(path)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	return fsbound.ReadRegular(resolved, path, b.root.MaxFileBytes())
}
