package imagelock

import (
	"fmt"
	"slices"
	"strings"
)

// Source is one lock and where it came from, for messages: "--lock
// gate.lock", "ImageLock images".
type Source struct {
	Name string
	Lock *Lock
}

// Index holds the entries of one or more locks for checking a render.
// It is not safe for concurrent use: Check records which entries were used.
type Index struct {
	entries []*indexed
	byRepo  map[string][]*indexed
	byTag   map[string][]*indexed
}

type indexed struct {
	Entry
	source string
	place  int // index in spec.images
	repo   string
	tag    string
	used   bool
}

// Unused is a lock entry no image of the render used.
type Unused struct {
	Entry
	// Source names the lock; Place is the entry's index in spec.images.
	Source string
	Place  int
}

// Problem is why an image of the render fails the lock.
type Problem struct {
	// Message says what the lock holds and what the render has.
	Message string
	// Proposed is the reference the lock pins the image to, when one
	// entry answers its tag.
	Proposed string
}

// NewIndex indexes the entries of the locks.
func NewIndex(locks ...Source) *Index {
	ix := &Index{byRepo: map[string][]*indexed{}, byTag: map[string][]*indexed{}}
	for _, s := range locks {
		for i, e := range s.Lock.Spec.Images {
			r, ok := parseRef(e.Image)
			if !ok {
				continue // Validate refused it
			}
			x := &indexed{Entry: e, source: s.Name, place: i, repo: r.repo, tag: r.tagOrLatest()}
			ix.entries = append(ix.entries, x)
			ix.byRepo[x.repo] = append(ix.byRepo[x.repo], x)
			ix.byTag[x.repo+":"+x.tag] = append(ix.byTag[x.repo+":"+x.tag], x)
		}
	}
	return ix
}

// Check holds one image reference of the render to the locks; ok is true
// when it passes. An image that does not parse passes here (image-digest
// reports it).
func (ix *Index) Check(image string) (Problem, bool) {
	ref, valid := parseRef(image)
	if !valid || (ref.digest != "" && !ref.validDigest()) {
		return Problem{}, true
	}
	repo := ref.repo
	locked := ix.byRepo[repo]
	tagged := ix.byTag[repo+":"+ref.tagOrLatest()] // no tag written: latest
	if ref.tag != "" || ref.digest == "" {
		// The render names the tag: its entries are in use, and a problem
		// with them is this image's, not an unused entry's.
		for _, x := range tagged {
			x.used = true
		}
	}
	if ref.digest == "" {
		if len(tagged) > 0 {
			return Problem{Message: fmt.Sprintf("image %q has no digest; the lock pins it to %s", image, digests(tagged)), Proposed: proposed(ref, tagged)}, false
		}
		return Problem{Message: fmt.Sprintf("image %q has no digest and the lock holds nothing for %s", image, repo)}, false
	}
	if len(locked) == 0 {
		return Problem{Message: fmt.Sprintf("image %q is not in the lock: it holds no entry for %s (pin it again with --write-lock)", image, repo)}, false
	}
	if ref.tag != "" && len(tagged) > 0 && !holds(tagged, ref.digest) {
		return Problem{Message: fmt.Sprintf("image %q: the lock pins tag %s to %s, the render to %s", image, ref.tag, digests(tagged), ref.digest), Proposed: proposed(ref, tagged)}, false
	}
	if !holds(locked, ref.digest) {
		return Problem{Message: fmt.Sprintf("image %q: digest %s is not in the lock, which holds %s for %s", image, ref.digest, digests(locked), repo)}, false
	}
	for _, x := range locked {
		if x.Digest == ref.digest {
			x.used = true
		}
	}
	return Problem{}, true
}

// Unused returns the entries no checked image used, in lock order.
func (ix *Index) Unused() []Unused {
	var out []Unused
	for _, x := range ix.entries {
		if !x.used {
			out = append(out, Unused{Entry: x.Entry, Source: x.source, Place: x.place})
		}
	}
	return out
}

// Conflicts names the entries two locks give different digests for one
// image and platform: the render cannot match both.
func (ix *Index) Conflicts() []string {
	var out []string
	for _, xs := range ix.byTag {
		for i, a := range xs {
			for _, b := range xs[i+1:] {
				if a.Platform == b.Platform && a.Digest != b.Digest {
					out = append(out, fmt.Sprintf("%s locks %s to %s, %s to %s", a.source, a.Image, a.Digest, b.source, b.Digest))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Len is the number of entries indexed.
func (ix *Index) Len() int { return len(ix.entries) }

func holds(xs []*indexed, digest string) bool {
	return slices.ContainsFunc(xs, func(x *indexed) bool { return x.Digest == digest })
}

func digests(xs []*indexed) string {
	var ds []string
	for _, x := range xs {
		d := x.Digest
		if x.Platform != "" {
			d += " (" + x.Platform + ")"
		}
		if !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	return strings.Join(ds, ", ")
}

// proposed is ref pinned to the one digest its tag is locked to, or "".
func proposed(r ref, tagged []*indexed) string {
	first := tagged[0].Digest
	for _, x := range tagged[1:] {
		if x.Digest != first {
			return ""
		}
	}
	return r.withDigest(first)
}
