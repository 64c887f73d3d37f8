package images

import "context"

// SignatureVerdict is the signature check of one image digest.
type SignatureVerdict struct {
	// Verified is true when an allowed signer signed the digest (and every
	// required attestation verified).
	Verified bool
	// Key is the signing key's fingerprint ("sha256:…"), for a key signer.
	Key string
	// Identity and Issuer name a certificate signer.
	Identity, Issuer string
	// Evidence is the digest of the manifest that carried the signature.
	Evidence string
	// TrustedRoot is the digest of the trusted root a certificate was
	// verified against.
	TrustedRoot string
	// Attestations are the verified attestations' predicate types.
	Attestations []string
	// Explanation says, when not verified, what was found and why each
	// signature was refused.
	Explanation string
	// Err is set when the registry failed while looking: no verdict.
	Err error
}

// Signer describes the verdict's signer for a message.
func (v SignatureVerdict) Signer() string {
	if v.Key != "" {
		return "key " + v.Key
	}
	return v.Identity + " (issuer " + v.Issuer + ")"
}

// SignatureVerifier checks the signatures of image references that carry
// a digest. It answers every reference it is given, each unique digest
// looked up once.
type SignatureVerifier interface {
	VerifySignatures(ctx context.Context, refs []string) map[string]SignatureVerdict
}
