package images

import (
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Resolve reports references the registry could not answer for: no verdict.
var Resolve = rules.Rule{
	ID: "image-resolve", Default: finding.SeverityError, Family: "images", NoVerdict: true, Unwaivable: true,
	Doc:      "pin/verify could not resolve or find a reference (not found, unauthorized, registry down, timeout): no verdict, exit 3",
	Outage:   "a digest that does not exist fails at pull time, mid-rollout",
	Fix:      "make the registry reachable and the reference exist (credentials: docker config, --pull-secrets-from; plain HTTP: --insecure-registry), then run again; it cannot be waived",
	Mutation: "point a digest at an image the registry does not hold",
	Reads:    []string{},
	Check:    checkImageResolve,
	Mutants: []rules.Mutant{
		{Name: "pin an image to a digest the registry does not hold", Apply: verifyOnly(rewriteFirstImage(func(r images.Ref) string {
			return r.Name + "@sha256:" + strings.Repeat("0", 64)
		}))},
	},
}

func checkImageResolve(c *rules.Context) []finding.Finding {
	if c.Resolutions == nil {
		return nil
	}
	verify := c.Config.Images.Digest == config.DigestVerify
	var out []finding.Finding
	seen := map[string]bool{}
	eachImage(c, func(w workloadImage) {
		if !w.ok || (w.ref.HasDigest() && !w.ref.ValidDigest()) {
			return
		}
		// Asked of the registry: with pin, every image still without a
		// digest (pinning it failed); with verify, every digest.
		if (!w.ref.HasDigest() && !c.Pinning) || (w.ref.HasDigest() && !verify) {
			return
		}
		res, asked := c.Resolutions[w.c.Image]
		if asked && res.Err == nil {
			return
		}
		key := w.c.Image + "\x00" + manifest.Ref(w.obj).String()
		if seen[key] {
			return
		}
		seen[key] = true
		why := "the resolver gave no answer"
		if res.Err != nil {
			why = res.Err.Error()
		}
		f := imageFinding("image-resolve", finding.SeverityError, w, "%s: %s", w.c.Describe(), why)
		f.NoVerdict = true
		out = append(out, f)
	})
	return out
}
