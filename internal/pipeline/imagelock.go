package pipeline

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/imagelock"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// readLock reads the ImageLock file spec.images.lock names (relative to
// the config that names it, as spec.policies) into the spec, inline, so
// the rules see it as the KRM function's inline lock. A lock that cannot
// be read or does not parse is a usage error: the run was asked to hold
// the render to a lock it does not have.
func (s *session) readLock(spec *config.Spec, u *Unit) error {
	l := spec.Images.Lock
	if l == nil || l.Object != nil {
		return nil
	}
	p := l.Path
	if !filepath.IsAbs(p) {
		switch {
		case s.o.ConfigPath != "":
			p = filepath.Join(filepath.Dir(s.o.ConfigPath), p)
		case u.found != nil:
			p = filepath.Join(u.dir, p)
		}
	}
	f, err := os.Open(p)
	if err != nil {
		return &config.UsageError{Where: "--lock / spec.images.lock", Err: fmt.Errorf("reading the image lock: %w", err)}
	}
	defer f.Close()
	data, err := stream.ReadAll(f, imagelock.MaxBytes, p)
	if err == nil {
		_, err = imagelock.Parse(data)
	}
	var obj map[string]any
	if err == nil {
		err = yaml.Unmarshal(data, &obj)
	}
	if err != nil {
		return &config.UsageError{Where: "--lock / spec.images.lock", Err: fmt.Errorf("%s: %w", l.Path, err)}
	}
	spec.Images.Lock = &config.Entry{Path: l.Path, Object: obj}
	return nil
}

// lockImages lists the images of resources as the rules walk them, in
// order: pin rewrites them in place, so the same walk after pinning pairs
// each reference as written with what it was pinned to.
func lockImages(resources []*yaml.RNode, spec *config.Spec) []images.Image {
	return images.Collect(resources, images.ConfiguredPaths(spec), manifest.IsLocalConfig)
}

// recordLock adds what a unit was pinned to to the run's lock: each image
// as written (its tag) beside its digest, after pinning. Images the render
// wrote with a digest are locked too; images that stayed without one (a
// failed look-up, reported by image-resolve) are not. With a signature
// check, each entry says who signed its digest.
func recordLock(b *imagelock.Builder, before, after []images.Image, platform string, sigs *signatureCheck) error {
	if len(before) != len(after) {
		return fmt.Errorf("locking images: %d images before pinning, %d after", len(before), len(after))
	}
	for i := range after {
		was, now := before[i].Ref, after[i].Ref
		if !after[i].Valid || !now.ValidDigest() {
			continue
		}
		e := imagelock.Entry{Image: was.Name, Digest: now.Digest}
		if !was.HasDigest() {
			e.Platform = platform // the tag was resolved for it
		}
		sigs.signLock(&e, after[i].Container.Image)
		if err := b.Add(e); err != nil {
			return err
		}
	}
	return nil
}
