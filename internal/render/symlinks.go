package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Argo CD's repo-server refuses a repository that holds a symlink leading
// out of it (its CheckOutOfBoundsSymlinks): every absolute symlink, and
// every relative one whose target, joined to the link's directory, lies
// outside the checkout. The gate does the same before it renders an
// Application source from --apps-root, so no render reads what such a link
// points at. The walk does not follow links; a chain of links is caught
// at the link that leaves. Each checkout is walked once per process.

// OutOfBoundsSymlinkError names a symlink that leaves the checkout.
type OutOfBoundsSymlinkError struct {
	Root, Link, Target string
}

func (e *OutOfBoundsSymlinkError) Error() string {
	return fmt.Sprintf("the repository at %s holds a symlink that leaves it: %s -> %s (Argo CD refuses out-of-bounds symlinks)", e.Root, e.Link, e.Target)
}

var symlinkChecks sync.Map // absolute root → func() error

// CheckSymlinks returns an *OutOfBoundsSymlinkError for the first symlink
// under root that leads outside it, memoized per root.
func CheckSymlinks(root string) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("checking symlinks in %s: %w", root, err)
	}
	check, _ := symlinkChecks.LoadOrStore(abs, sync.OnceValue(func() error { return checkSymlinks(root, abs) }))
	return check.(func() error)()
}

func checkSymlinks(root, abs string) error {
	return filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a file that went away while walking (a lock file)
			}
			return fmt.Errorf("checking symlinks in %s: %w", root, err)
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return fmt.Errorf("checking symlinks in %s: %w", root, err)
		}
		rel, _ := filepath.Rel(abs, p)
		link := filepath.Join(root, rel)
		if filepath.IsAbs(target) {
			return &OutOfBoundsSymlinkError{Root: root, Link: link, Target: target}
		}
		inRoot, err := filepath.Rel(abs, filepath.Join(filepath.Dir(p), target))
		if err != nil || !filepath.IsLocal(inRoot) && inRoot != "." {
			return &OutOfBoundsSymlinkError{Root: root, Link: link, Target: target}
		}
		return nil
	})
}
