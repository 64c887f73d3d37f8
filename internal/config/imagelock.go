package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/imagelock"
)

// validateLock checks spec.images.lock: a path, or an inline ImageLock
// that parses.
func (im *Images) validateLock() error {
	switch l := im.Lock; {
	case l == nil:
		return nil
	case l.Object != nil:
		if _, err := imagelock.FromMap(l.Object); err != nil {
			return fmt.Errorf("spec.images.lock: %w", err)
		}
	case strings.TrimSpace(l.Path) == "":
		return errors.New("spec.images.lock: empty path")
	}
	return nil
}

// ImageLock returns the inline ImageLock of spec.images.lock, or nil when
// there is none or it is a path not read yet.
func (im *Images) ImageLock() (*imagelock.Lock, error) {
	if im.Lock == nil || im.Lock.Object == nil {
		return nil, nil
	}
	l, err := imagelock.FromMap(im.Lock.Object)
	if err != nil {
		return nil, fmt.Errorf("spec.images.lock: %w", err)
	}
	return l, nil
}
