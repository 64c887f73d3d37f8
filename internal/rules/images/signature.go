package images

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Signature fires on an image digest no allowed signer signed: a verdict.
// A registry or trusted-root failure while looking is no verdict.
var Signature = rules.Rule{
	ID: "image-signature", Default: finding.SeverityError, Family: "images", MayNoVerdict: true,
	Doc:      "signers are configured (--key, --certificate-identity[-regexp] with --trusted-root, spec.images.signatures) and pin or digest: verify finds an image digest with no valid signature from an allowed signer (sigstore bundles as OCI referrers, or cosign's legacy .sig tag), or without a required attestation; a registry failure while looking is no verdict, exit 3",
	Outage:   "an image nobody you trust built reaches the cluster: a compromised registry account, a typo-squatted repository, a digest copied from another image",
	Fix:      "sign the digest with an allowed signer (cosign sign --key KEY IMAGE@DIGEST, or keyless in CI with the allowed identity) and attach the attestations asked for, or deploy a digest that is signed; if the signer changed, add its key or identity to the trusted config",
	Mutation: "deploy a digest signed by no allowed signer",
	Reads:    []string{},
	Check:    checkImageSignature,
}

func checkImageSignature(c *rules.Context) []finding.Finding {
	if c.Signatures == nil {
		// Signers in the config, but this run looks up no signatures
		// (check with digest: require, offline): say so, never a silent
		// pass that reads as "signed".
		if c.Config.Images.Signatures.Enabled() && !c.Pinning {
			return []finding.Finding{{Severity: finding.SeverityInfo,
				Message: "not checked: signers are configured (spec.images.signatures), but digest: " + c.Config.Images.Digest +
					" asks no registry, so no signature was looked up; kubectl gate pin, or check --digest verify, verifies them"}}
		}
		return nil
	}
	var out []finding.Finding
	seen := map[string]bool{}
	eachImage(c, func(w workloadImage) {
		if !w.ok || !w.ref.ValidDigest() {
			return
		}
		key := w.c.Image + "\x00" + manifest.Ref(w.obj).String()
		if seen[key] {
			return
		}
		seen[key] = true
		v, asked := c.Signatures[w.c.Image]
		switch {
		case asked && v.Verified:
			return
		case !asked:
			f := imageFinding("image-signature", finding.SeverityError, w, "%s: the signature check gave no answer", w.c.Describe())
			f.NoVerdict = true
			out = append(out, f)
		case v.Err != nil:
			f := imageFinding("image-signature", finding.SeverityError, w, "%s: could not look for signatures: %v", w.c.Describe(), v.Err)
			f.NoVerdict = true
			out = append(out, f)
		default:
			out = append(out, imageFinding("image-signature", finding.SeverityError, w, "%s: %s", w.c.Describe(), v.Explanation))
		}
	})
	return out
}
