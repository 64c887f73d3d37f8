package imagelock

import (
	"fmt"
	"sync"
	"time"
)

// Builder collects the entries of a lock while a run pins; it is safe for
// concurrent use (units are pinned concurrently).
type Builder struct {
	mu sync.Mutex
	m  map[string]Entry
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{m: map[string]Entry{}} }

// Add records an entry. The same image and platform pinned to two digests
// in one run is an error: the lock could hold only one of them.
func (b *Builder) Add(e Entry) error {
	if err := e.validate(); err != nil {
		return fmt.Errorf("locking %s: %w", e.Image, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := e.key()
	if old, ok := b.m[k]; ok {
		if old.Digest != e.Digest {
			return fmt.Errorf("locking %s: pinned to both %s and %s in one run", e.Image, old.Digest, e.Digest)
		}
		if old.Signer != nil && e.Signer == nil {
			return nil // keep what was verified
		}
	}
	b.m[k] = e
	return nil
}

// Lock returns the lock of everything added, named name. An entry that
// previous (the lock file being replaced, or nil) already holds with the
// same digest, platform and evidence keeps its resolved time, so that
// pinning again changes only the lines of images that moved.
func (b *Builder) Lock(name string, previous *Lock, now time.Time) *Lock {
	b.mu.Lock()
	defer b.mu.Unlock()
	prev := map[string]Entry{}
	if previous != nil {
		for _, e := range previous.Spec.Images {
			prev[e.key()] = e
		}
	}
	l := New(name)
	if previous != nil && previous.Metadata != nil {
		l.Metadata = previous.Metadata
	}
	stamp := now.UTC().Truncate(time.Second).Format(time.RFC3339)
	for k, e := range b.m {
		e.Resolved = stamp
		if p, ok := prev[k]; ok && sameEvidence(p, e) && p.Resolved != "" {
			e.Resolved = p.Resolved
		}
		l.Spec.Images = append(l.Spec.Images, e)
	}
	l.Sort()
	return l
}

func sameEvidence(a, b Entry) bool {
	a.Resolved, b.Resolved = "", ""
	as, bs := a.Signer, b.Signer
	a.Signer, b.Signer = nil, nil
	if a != b || (as == nil) != (bs == nil) {
		return false
	}
	return as == nil || *as == *bs
}
