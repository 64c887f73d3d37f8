package images

import (
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Stale fires when a pinned tag has moved on in the registry.
var Stale = rules.Rule{
	ID: "image-digest-stale", Default: finding.SeverityWarning, Family: "images",
	Doc:      "verify: the tag now points to a different digest than the one pinned",
	Outage:   "the pinned digest is no longer what the tag means: a fix or a CVE patch is not deployed",
	Fix:      "re-run kubectl gate pin to take the digest the tag means now, or keep the old digest on purpose and set the rule to off for this input",
	Mutation: "pin a digest other than the tag's",
	Reads:    []string{},
	Check:    checkImageStale,
}

func checkImageStale(c *rules.Context) []finding.Finding {
	if c.Resolutions == nil || c.Config.Images.Digest != config.DigestVerify {
		return nil
	}
	var out []finding.Finding
	eachImage(c, func(w workloadImage) {
		if !w.ok || !w.ref.ValidDigest() || w.ref.Tag == "" {
			return
		}
		res, ok := c.Resolutions[w.ref.Name]
		if !ok || res.Err != nil || res.Digest == w.ref.Digest {
			return
		}
		f := imageFinding("image-digest-stale", finding.SeverityWarning, w, "%s: tag %s now points to %s, not the pinned %s", w.c.Describe(), w.ref.Name, res.Digest, w.ref.Digest)
		f.Field.ProposedValue = w.ref.WithDigest(res.Digest, false)
		out = append(out, f)
	})
	return out
}
