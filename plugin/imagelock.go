package plugin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/atomicfile"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/imagelock"
)

// lockOptions are the image lock flags: check --lock, pin --write-lock.
type lockOptions struct {
	lock      string
	writeLock string
	builder   *imagelock.Builder
}

func addLockFlags(fs *pflag.FlagSet, o *options, pin bool) {
	if pin {
		fs.StringVar(&o.locks.writeLock, "write-lock", "", "write an ImageLock of every image's tag and pinned digest to `FILE` (atomically), for check --lock")
		return
	}
	fs.StringVar(&o.locks.lock, "lock", "", "hold every image to the ImageLock `FILE` pin --write-lock wrote, with no registry call (= spec.images.lock)")
}

// applyLock points spec.images.lock at --lock (absolute: no config
// directory applies to it).
func (o *options) applyLock(s *config.Spec) error {
	if o.locks.lock == "" {
		return nil
	}
	abs, err := filepath.Abs(o.locks.lock)
	if err != nil {
		return usageErr("--lock", "%q: %v", o.locks.lock, err)
	}
	s.Images.Lock = &config.Entry{Path: abs}
	return nil
}

// lockBuilder is what the pipeline collects the lock into; nil without
// --write-lock.
func (o *options) lockBuilder() *imagelock.Builder {
	if o.locks.writeLock == "" {
		return nil
	}
	if o.locks.builder == nil {
		o.locks.builder = imagelock.NewBuilder()
	}
	return o.locks.builder
}

// writeLock writes the run's ImageLock to --write-lock, keeping the
// resolved times of entries the file already holds unchanged (a re-pin
// changes only the lines of images that moved). A file there that is not
// an ImageLock is not replaced.
func (o *options) writeLock(now time.Time) error {
	path := o.locks.writeLock
	var previous *imagelock.Lock
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("writing the image lock: %w", err)
	default:
		if previous, err = imagelock.Parse(data); err != nil {
			return usageErr("--write-lock", "%s exists and is not an image lock, not replacing it: %v", path, err)
		}
	}
	out, err := o.lockBuilder().Lock("images", previous, now).Marshal()
	if err != nil {
		return err
	}
	return atomicfile.Write(path, out, 0o644)
}
