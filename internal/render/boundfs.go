package render

import (
	"fmt"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// boundFS is the disk as kustomize reads it through the gate's filesystem
// boundary (internal/fsbound): every file kustomize reads must be a
// regular file within the per-file cap (--max-input-bytes, which bounds -f
// the same way), so a FIFO waits for nothing and /dev/zero or a 700 MB
// resource is refused by name before it is read. A file inside the root
// may not reach outside it through a symlink, whatever the load restrictor
// (kustomize's own restrictor checks each kustomization's directory; the
// boundary also holds for the files the gate reads itself). A file outside
// the root as written (a base the kustomization names with ../, a remote
// resource's clone) is kustomize's to allow or refuse.
type boundFS struct {
	filesys.FileSystem
	root *fsbound.Root
}

func newBoundFS(dir, root string, maxFileBytes int64) (*boundFS, error) {
	if root == "" {
		root = fsbound.For(dir)
	}
	r, err := fsbound.New(root, maxFileBytes)
	if err != nil {
		return nil, err
	}
	return &boundFS{FileSystem: filesys.MakeFsOnDisk(), root: r}, nil
}

// ReadFile reads path through the boundary.
// A YAML file with an alias kustomize's reader cannot expand (a cycle, or
// a "billion laughs") is refused by name: kyaml would recurse until the
// stack overflows, or expand without bound.
func (b *boundFS) ReadFile(path string) ([]byte, error) {
	data, err := b.read(path)
	if err != nil {
		return nil, err
	}
	if err := stream.CheckAliases(data); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}

func (b *boundFS) read(path string) ([]byte, error) {
	if b.root.Inside(path) {
		return b.root.ReadFile(path)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	return fsbound.ReadRegular(resolved, path, b.root.MaxFileBytes())
}
