package selftest

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

var imageMutants = []Mutant{
	{Rule: "image-digest", Name: "replace a digest by :latest", Apply: rewriteFirstImage(func(r images.Ref) string {
		return repoOf(r) + ":latest"
	})},
	{Rule: "image-digest", Name: "drop the digest, keep the tag", Apply: rewriteFirstImage(func(r images.Ref) string {
		if r.Tag == "" {
			return repoOf(r)
		}
		return r.Name
	})},
	{Rule: "image-resolve", Name: "pin an image to a digest the registry does not hold", Apply: verifyOnly(rewriteFirstImage(func(r images.Ref) string {
		return r.Name + "@sha256:" + strings.Repeat("0", 64)
	}))},
	{Rule: "image-pinned-by", Name: "remove the Pin transformer's stamp", Apply: removeStamp},
	{Rule: "image-registry", Name: "move an image to another registry", Apply: func(rs []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
		if len(cfg.Images.AllowedRegistries) == 0 {
			return nil, false
		}
		return rewriteFirstImage(func(r images.Ref) string {
			return "registry.invalid.example/" + r.Original
		})(rs, cfg)
	}},
}

// verifyOnly applies a mutant only when digests are verified against the
// registry (images.digest: verify): offline there is nothing to ask.
func verifyOnly(apply func([]*yaml.RNode, *config.Spec) ([]*yaml.RNode, bool)) func([]*yaml.RNode, *config.Spec) ([]*yaml.RNode, bool) {
	return func(rs []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
		if cfg.Images.Digest != config.DigestVerify {
			return nil, false
		}
		return apply(rs, cfg)
	}
}

// removeStamp removes the Pin transformer's stamp from the first stamped
// workload (image-pinned-by fires only with --require-pinned-by).
func removeStamp(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
	for _, obj := range rs {
		if obj.GetAnnotations()[rules.AnnoPinned] != "" {
			if err := obj.PipeE(yaml.ClearAnnotation(rules.AnnoPinned)); err != nil {
				return nil, false
			}
			return rs, true
		}
	}
	return nil, false
}

// rewriteFirstImage mutates the first digest-pinned image of the render.
func rewriteFirstImage(to func(images.Ref) string) func([]*yaml.RNode, *config.Spec) ([]*yaml.RNode, bool) {
	return func(rs []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
		for _, obj := range rs {
			if rules.IsLocalConfig(obj) {
				continue
			}
			for _, c := range images.Find(obj, rules.PodSpecPaths(cfg)) {
				ref, ok := images.Parse(c.Image)
				if !ok || !ref.ValidDigest() {
					continue
				}
				if err := c.SetImage(to(ref)); err != nil {
					return nil, false
				}
				return rs, true
			}
		}
		return nil, false
	}
}

// repoOf is the repository without tag or digest.
func repoOf(r images.Ref) string {
	if r.Tag == "" {
		return r.Name
	}
	return r.Name[:len(r.Name)-len(r.Tag)-1]
}
