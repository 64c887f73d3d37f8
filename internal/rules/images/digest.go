package images

import (
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Digest fires on an image that is not pinned by digest.
var Digest = rules.Rule{
	ID: "image-digest", Default: finding.SeverityError, Family: "images",
	Doc:       "an image has no @sha256: digest (a tag, :latest, or no tag at all); nginx:1.27@sha256:… passes",
	Outage:    "a tag moves after the gate passed, and the cluster runs something nobody checked",
	Fix:       "pin the image to a digest: kubectl gate pin --write-kustomization DIR, or a Pin transformer in the kustomization, or images: with a digest: in the overlay",
	Mutation:  "replace a digest by :latest",
	PerObject: true,
	Check:     checkImageDigest,
	Mutants: []rules.Mutant{
		{Name: "replace a digest by :latest", Apply: rewriteFirstImage(func(r images.Ref) string {
			return repoOf(r) + ":latest"
		})},
		{Name: "drop the digest, keep the tag", Apply: rewriteFirstImage(func(r images.Ref) string {
			if r.Tag == "" {
				return repoOf(r)
			}
			return r.Name
		})},
	},
}

func checkImageDigest(c *rules.Context) []finding.Finding {
	if c.Config.Images.Digest == config.DigestOff {
		return nil
	}
	var out []finding.Finding
	eachImage(c, func(w workloadImage) {
		switch {
		case !w.ok:
			out = append(out, imageFinding("image-digest", finding.SeverityError, w, "%s: %q is not a valid image reference", w.c.Describe(), w.c.Image))
		case w.ref.HasDigest() && !w.ref.ValidDigest():
			out = append(out, imageFinding("image-digest", finding.SeverityError, w, "%s: image %q has a malformed digest", w.c.Describe(), w.c.Image))
		case !w.ref.HasDigest():
			if c.Pinning && c.Resolutions[w.c.Image].Err != nil {
				return // image-resolve reports why it could not be pinned
			}
			what := "tag " + w.ref.Tag
			if w.ref.Tag == "" {
				what = "no tag (implicit latest)"
			}
			out = append(out, imageFinding("image-digest", finding.SeverityError, w, "%s: image %q is not pinned by digest (%s)", w.c.Describe(), w.c.Image, what))
		}
	})
	return out
}
