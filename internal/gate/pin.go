package gate

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// lookups lists the references the registry must answer: with pin, every
// image without a digest; with verify, every digest (does it exist?) and the
// tag beside it (does the tag still point there?).
func lookups(resources []*yaml.RNode, cfg *config.Spec, pin bool) []string {
	verify := cfg.Images.Digest == config.DigestVerify
	var refs []string
	forEachImage(resources, cfg, func(_ *yaml.RNode, c images.Container, ref images.Ref) {
		switch {
		case !ref.HasDigest() && pin:
			refs = append(refs, c.Image)
		case ref.ValidDigest() && verify:
			refs = append(refs, c.Image)
			if ref.Tag != "" {
				refs = append(refs, ref.Name)
			}
		}
	})
	return refs
}

// pin rewrites every resolved image to its digest and stamps each workload
// whose images are then all pinned.
func pin(resources []*yaml.RNode, cfg *config.Spec, res map[string]images.Resolution, dropTag bool, version string) error {
	pinned := map[*yaml.RNode]bool{}
	var err error
	forEachImage(resources, cfg, func(obj *yaml.RNode, c images.Container, ref images.Ref) {
		if _, ok := pinned[obj]; !ok {
			pinned[obj] = true
		}
		if ref.HasDigest() {
			pinned[obj] = pinned[obj] && ref.ValidDigest()
			return
		}
		r, ok := res[c.Image]
		if !ok || r.Err != nil || r.Digest == "" {
			pinned[obj] = false
			return
		}
		pinnedRef := ref.WithDigest(r.Digest, dropTag)
		if e := c.SetImage(pinnedRef); e != nil && err == nil {
			err = e
		}
		// The registry just answered for the pinned reference and its tag.
		res[pinnedRef] = images.Resolution{Digest: r.Digest}
		if ref.Tag != "" {
			res[ref.Name] = images.Resolution{Digest: r.Digest}
		}
	})
	if err != nil {
		return err
	}
	if version == "" {
		version = "dev"
	}
	for obj, ok := range pinned {
		if ok {
			if !yamlpath.SetAnnotation(obj.YNode(), manifest.AnnoPinned, version) {
				return fmt.Errorf("stamping %s/%s: not an object", obj.GetKind(), obj.GetName())
			}
		}
	}
	return nil
}

// forEachImage calls fn for every valid image of the one walk the rules
// also use (images.Collect): pin rewrites exactly what check finds.
func forEachImage(resources []*yaml.RNode, cfg *config.Spec, fn func(*yaml.RNode, images.Container, images.Ref)) {
	for _, im := range images.Collect(resources, images.ConfiguredPaths(cfg), manifest.IsLocalConfig) {
		if im.Valid {
			fn(im.Obj, im.Container, im.Ref)
		}
	}
}
