package images

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Edits the image rules' selftest mutants share.

// verifyOnly applies a mutant only when digests are verified against the
// registry (images.digest: verify): offline there is nothing to ask.
func verifyOnly(apply func(*rules.Subject) bool) func(*rules.Subject) bool {
	return func(s *rules.Subject) bool {
		return s.Config.Images.Digest == config.DigestVerify && apply(s)
	}
}

// removeStamp removes the Pin transformer's stamp from the first stamped
// workload (image-pinned-by fires only with --require-pinned-by).
func removeStamp(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
	for _, obj := range rs {
		if obj.GetAnnotations()[manifest.AnnoPinned] != "" {
			if err := obj.PipeE(yaml.ClearAnnotation(manifest.AnnoPinned)); err != nil {
				return nil, false
			}
			return rs, true
		}
	}
	return nil, false
}

// rewriteFirstImage mutates the first digest-pinned image of the render.
func rewriteFirstImage(to func(images.Ref) string) func(*rules.Subject) bool {
	return rules.OnResources(func(rs []*yaml.RNode, cfg *config.Spec) ([]*yaml.RNode, bool) {
		return onFirstImage(rs, cfg, to)
	})
}

func onFirstImage(rs []*yaml.RNode, cfg *config.Spec, to func(images.Ref) string) ([]*yaml.RNode, bool) {
	for _, obj := range rs {
		if manifest.IsLocalConfig(obj) {
			continue
		}
		for _, c := range images.Find(obj, images.ConfiguredPaths(cfg)) {
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

// repoOf is the repository without tag or digest.
func repoOf(r images.Ref) string {
	if r.Tag == "" {
		return r.Name
	}
	return r.Name[:len(r.Name)-len(r.Tag)-1]
}
