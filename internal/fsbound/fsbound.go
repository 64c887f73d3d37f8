package fsbound

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultMaxFileBytes bounds one file read through a Root when the caller
// gives no cap: the default of --max-input-bytes (stream.DefaultMaxBytes).
const DefaultMaxFileBytes = 256 << 20

// Root is a directory reads are bounded to.
type Root struct {
	dir      string // absolute, as given
	resolved string // absolute, symlinks resolved
	display  string
	max      int64
}

// New returns the Root at dir with a per-file cap of maxFileBytes (0:
// DefaultMaxFileBytes).
func New(dir string, maxFileBytes int64) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	if maxFileBytes <= 0 {
		maxFileBytes = DefaultMaxFileBytes
	}
	return &Root{dir: abs, resolved: resolved, display: dir, max: maxFileBytes}, nil
}

// Repository returns the repository dir lies in: the nearest directory
// above it, or itself, that holds .git; ok is false when there is none.
func Repository(dir string) (root string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// For returns the root the reads of an input at dir are bounded to: the
// repository it lies in (the nearest directory above it, or itself, that
// holds .git), else the working directory when dir lies below it, else dir.
func For(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if repo, ok := Repository(abs); ok {
		return repo
	}
	if wd, err := os.Getwd(); err == nil && within(wd, abs) {
		return wd
	}
	return abs
}

// Dir is the root directory as given.
func (r *Root) Dir() string { return r.display }

// MaxFileBytes is the per-file cap.
func (r *Root) MaxFileBytes() int64 { return r.max }

// EscapeError is a symlink that leads outside the root.
type EscapeError struct {
	Root, Link, Target string
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("%s is a symlink that leaves %s (-> %s): nothing outside the repository is read", e.Link, e.Root, e.Target)
}

// OutsideError is a path that lies outside the root as written.
type OutsideError struct {
	Root, Path string
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s lies outside %s: nothing outside the repository is read", e.Path, e.Root)
}

// NotRegularError is a path that is not a regular file (a FIFO, device,
// socket) where a file is read.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (%s): not read", e.Path, kind(e.Mode))
}

// TooLargeError is a file over the per-file cap.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes (the cap of --max-input-bytes): not read", e.Path, e.Max)
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}

// within reports whether p is root or below it (both absolute, clean).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// Inside reports whether path, as written, lies in the root: below the
// root as given, or below it with its symlinks resolved (the form
// kustomize hands on, having resolved a directory's links itself).
func (r *Root) Inside(path string) bool {
	_, ok := r.rel(path)
	return ok
}

// rel is path relative to the root, as written; ok is false outside it.
func (r *Root) rel(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	for _, dir := range []string{r.dir, r.resolved} {
		if within(dir, abs) {
			rel, _ := filepath.Rel(dir, abs)
			return rel, true
		}
	}
	return "", false
}

// Resolve checks that path lies in the root as written and once its
// symlinks are followed, and returns the resolved path. A symlink that
// leaves the root is an *EscapeError naming it (as the caller wrote the
// path), a path outside the root an *OutsideError.
func (r *Root) Resolve(path string) (string, error) {
	rel, ok := r.rel(path)
	if !ok {
		return "", &OutsideError{Root: r.display, Path: path}
	}
	return r.resolveInside(path, rel)
}

// Link checks that the symlink at p (which lies in the root) leads to a
// target inside it: an *EscapeError naming p otherwise. For a walk that
// meets links one by one (-f DIR).
func (r *Root) Link(p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", p, err)
	}
	_, err = r.follow(abs, p)
	return err
}

// resolveInside follows the symlinks of rel (below the root), component
// by component from the root, and names the first that leaves it.
func (r *Root) resolveInside(path, rel string) (string, error) {
	cur := r.resolved
	if rel == "." {
		return cur, nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", path, errors.Unwrap(err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := r.follow(next, filepath.Join(r.display, filepath.Join(parts[:i+1]...)))
			if err != nil {
				return "", err
			}
			next = target
		}
		cur = next
	}
	return cur, nil
}

// follow resolves the symlink at p (shown as name) and returns its
// target, or an *EscapeError when the target lies outside the root. A
// dangling link is judged by its target as written.
func (r *Root) follow(p, name string) (string, error) {
	link, err := os.Readlink(p)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", name, errors.Unwrap(err))
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		written := link
		if !filepath.IsAbs(written) {
			written = filepath.Join(filepath.Dir(p), written)
		}
		if !within(r.resolved, filepath.Clean(written)) {
			return "", &EscapeError{Root: r.display, Link: name, Target: link}
		}
		return "", fmt.Errorf("reading %s: %w", name, err)
	}
	if !within(r.resolved, target) {
		return "", &EscapeError{Root: r.display, Link: name, Target: link}
	}
	return target, nil
}

// Check resolves path (Resolve) and checks it is a regular file within the
// cap, without reading it: for files another library reads.
func (r *Root) Check(path string) error {
	_, _, err := r.stat(path)
	return err
}

func (r *Root) stat(path string) (string, fs.FileInfo, error) {
	resolved, err := r.Resolve(path)
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", path, errors.Unwrap(err))
	}
	if !fi.Mode().IsRegular() {
		return "", nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > r.max {
		return "", nil, &TooLargeError{Path: path, Max: r.max}
	}
	return resolved, fi, nil
}

// ReadFile reads a regular file inside the root, up to the cap.
func (r *Root) ReadFile(path string) ([]byte, error) {
	resolved, err := r.Resolve(path)
	if err != nil {
		return nil, err
	}
	return ReadRegular(resolved, path, r.max)
}

// ReadRegular reads the file at resolved (shown as path) if it is a
// regular file of at most max bytes. It opens without blocking (a FIFO
// that appeared since a check does not wait for a writer) and checks what
// it opened.
func ReadRegular(resolved, path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(resolved, os.O_RDONLY|oNonBlock, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > max {
		return nil, &TooLargeError{Path: path, Max: max}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: path, Max: max}
	}
	return data, nil
}

// CheckTree walks dir (which must lie in the root; symlinks not followed)
// as a library that reads every file below it would (Helm's chart loader
// follows symlinks): every symlink must stay in the root, every entry be a
// directory, a regular file or such a symlink, and every file be within
// the cap. A symlinked directory is walked too.
func (r *Root) CheckTree(dir string) error {
	resolved, err := r.Resolve(dir)
	if err != nil {
		return err
	}
	return r.checkTree(dir, resolved, 0)
}

// maxLinkDepth bounds directory symlinks followed while walking (a loop
// of links inside the root).
const maxLinkDepth = 40

func (r *Root) checkTree(shown, resolved string, depth int) error {
	if depth > maxLinkDepth {
		return fmt.Errorf("walking %s: more than %d directory symlinks deep", shown, maxLinkDepth)
	}
	return filepath.WalkDir(resolved, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walking %s: %w", shown, err)
		}
		rel, _ := filepath.Rel(resolved, p)
		name := filepath.Join(shown, rel)
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			target, err := r.follow(p, name)
			if err != nil {
				return err
			}
			fi, err := os.Stat(target)
			if err != nil {
				return fmt.Errorf("reading %s: %w", name, err)
			}
			if fi.IsDir() {
				return r.checkTree(name, target, depth+1)
			}
			return r.checkFile(name, fi)
		default:
			fi, err := d.Info()
			if err != nil {
				return fmt.Errorf("reading %s: %w", name, err)
			}
			return r.checkFile(name, fi)
		}
	})
}

func (r *Root) checkFile(name string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: name, Mode: fi.Mode()}
	}
	if fi.Size() > r.max {
		return &TooLargeError{Path: name, Max: r.max}
	}
	return nil
}
