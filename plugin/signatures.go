package plugin

import (
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
)

// signatureOptions are the signer flags of pin and check (= spec.images.signatures).
type signatureOptions struct {
	keys           []string
	identity       string
	identityRegexp string
	issuer         string
	issuerRegexp   string
	trustedRoot    string
	// check is set on check, which verifies signatures only with --digest
	// verify (pin always verifies what it pins).
	check bool
}

func addSignatureFlags(fs *pflag.FlagSet, o *options) {
	s := &o.signatures
	s.check = fs.Name() == "kubectl gate check"
	fs.StringArrayVar(&s.keys, "key", nil, "require every pinned or verified digest to be signed by this cosign public key `FILE` (repeatable; = spec.images.signatures.keys)")
	fs.StringVar(&s.identity, "certificate-identity", "", "allow keyless signatures whose certificate names this identity (with an issuer flag and --trusted-root)")
	fs.StringVar(&s.identityRegexp, "certificate-identity-regexp", "", "allow keyless signatures whose certificate identity matches this `REGEXP`")
	fs.StringVar(&s.issuer, "certificate-oidc-issuer", "", "the OIDC issuer the certificate must name (e.g. https://token.actions.githubusercontent.com)")
	fs.StringVar(&s.issuerRegexp, "certificate-oidc-issuer-regexp", "", "the OIDC issuer the certificate must match, as a `REGEXP`")
	fs.StringVar(&s.trustedRoot, "trusted-root", "", "verify keyless signatures offline against this sigstore trusted_root.json `FILE` (= spec.images.signatures.trustedRoot)")
}

// applySignatures adds the signer flags to spec.images.signatures: keys and
// the identity are added to the config's, --trusted-root replaces its root.
// Paths are made absolute: no config directory applies to them.
func (o *options) applySignatures(spec *config.Spec) error {
	s := o.signatures
	id := config.SignatureIdentity{Identity: s.identity, IdentityRegexp: s.identityRegexp, Issuer: s.issuer, IssuerRegexp: s.issuerRegexp}
	hasID := id != (config.SignatureIdentity{})
	if len(s.keys) == 0 && !hasID && s.trustedRoot == "" {
		return nil
	}
	if s.check && spec.Images.Digest != config.DigestVerify {
		return usageErr("--key / --certificate-identity", "check verifies signatures only with --digest verify (or spec.images.digest: verify), which asks the registry; offline, hold the render to a lock (--lock)")
	}
	out := spec.Images.Signatures.Clone()
	for _, k := range s.keys {
		abs, err := filepath.Abs(k)
		if err != nil {
			return usageErr("--key", "%q: %v", k, err)
		}
		out.Keys = append(out.Keys, abs)
	}
	if hasID {
		out.Identities = append(out.Identities, id)
	}
	if s.trustedRoot != "" {
		abs, err := filepath.Abs(s.trustedRoot)
		if err != nil {
			return usageErr("--trusted-root", "%q: %v", s.trustedRoot, err)
		}
		out.TrustedRoot = abs
	}
	spec.Images.Signatures = out
	return nil
}
