package signature

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// BundleMediaType is the artifact and layer media type of a sigstore
// bundle stored as an OCI referrer.
const BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// CosignSignPredicate is the predicate type of cosign's image signature
// statement; any other predicate type is an attestation.
const CosignSignPredicate = "https://sigstore.dev/cosign/sign/v1"

// Bounds on what a registry can make a look-up read.
const (
	maxReferrers = 128
	maxManifest  = 4 << 20
	maxBundle    = 4 << 20
)

// referrers reads the sigstore bundles that refer to digest: the referrers
// API, or its tag fallback (remote.Referrers falls back when the registry
// answers the API with 404, 400 or 406, or with a body that is not an
// index). Every candidate's manifest is read and checked; the index's word
// is never enough.
func (v *Verifier) referrers(repo name.Repository, digest v1.Hash, opts []remote.Option, f *found) {
	idx, err := remote.Referrers(repo.Digest(digest.String()), opts...)
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("listing referrers: %w", err))
		return
	}
	im, err := idx.IndexManifest()
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("listing referrers: %w", err))
		return
	}
	// Every referrer's manifest is read: registries fill the index's
	// artifactType differently (some from the config media type), and a
	// writer can make it say anything.
	for i, d := range im.Manifests {
		if i == maxReferrers {
			f.refuse("referrers", "more than %d referrers listed; the rest were not read", maxReferrers)
			break
		}
		v.referrer(repo, digest, d, opts, f)
	}
}

// referrer reads and verifies one referrer.
func (v *Verifier) referrer(repo name.Repository, digest v1.Hash, d v1.Descriptor, opts []remote.Option, f *found) {
	where := "referrer " + d.Digest.String()
	if d.Size > maxManifest {
		f.refuse(where, "manifest of %d bytes, more than %d", d.Size, maxManifest)
		return
	}
	desc, err := remote.Get(repo.Digest(d.Digest.String()), opts...)
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("reading %s: %w", where, err))
		return
	}
	layer, why, isBundle := bundleLayer(desc.Manifest, digest)
	if !isBundle && d.ArtifactType != BundleMediaType {
		return // another kind of referrer (an SBOM, a Notation signature…), and not offered as a bundle
	}
	if why != "" {
		f.refuse(where, "%s", why)
		return
	}
	data, err := readBlob(repo, layer, maxBundle, opts)
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("reading the bundle of %s: %w", where, err))
		return
	}
	b, err := ParseBundle(data)
	if err != nil {
		f.refuse(where, "%v", err)
		return
	}
	signer, predicate, err := v.verifyBundle(b, digest)
	if err != nil {
		f.refuse(where, "%v", err)
		return
	}
	r := Result{Signer: signer, Evidence: d.Digest.String(), Via: "referrers"}
	if predicate == CosignSignPredicate {
		if f.signature == nil {
			f.signature = &r
		}
		return
	}
	if _, ok := f.attestations[predicate]; !ok {
		f.attestations[predicate] = r
	}
}

// bundleLayer checks a referrer's manifest as read: an image manifest whose
// artifactType (or, in older writers, config media type) is a sigstore
// bundle, whose subject is digest, with one bundle layer. It returns that
// layer, or why the manifest was refused.
//
// isBundle reports whether the manifest says it is a bundle at all.
func bundleLayer(raw []byte, digest v1.Hash) (layer v1.Descriptor, why string, isBundle bool) {
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return v1.Descriptor{}, fmt.Sprintf("manifest does not parse: %v", err), false
	}
	at := m.ArtifactType
	if at == "" {
		at = string(m.Config.MediaType)
	}
	switch {
	case at != BundleMediaType:
		return v1.Descriptor{}, fmt.Sprintf("the manifest's artifactType is %q, not a sigstore bundle (the referrers index said it was one)", at), false
	case m.Subject == nil || m.Subject.Digest != digest:
		return v1.Descriptor{}, "the manifest's subject is not this digest", true
	case len(m.Layers) != 1 || string(m.Layers[0].MediaType) != BundleMediaType:
		return v1.Descriptor{}, fmt.Sprintf("want one layer of media type %s", BundleMediaType), true
	}
	return m.Layers[0], "", true
}

// readBlob reads a blob by digest, bounded; go-containerregistry checks
// that the content hashes to the digest.
func readBlob(repo name.Repository, d v1.Descriptor, limit int64, opts []remote.Option) ([]byte, error) {
	if d.Size > limit {
		return nil, fmt.Errorf("blob %s of %d bytes, more than %d", d.Digest, d.Size, limit)
	}
	l, err := remote.Layer(repo.Digest(d.Digest.String()), opts...)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("blob %s is larger than %d bytes", d.Digest, limit)
	}
	return data, nil
}

// ParseBundle decodes a sigstore bundle (JSON), as sigstore-go validates it.
func ParseBundle(data []byte) (*bundle.Bundle, error) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("not a valid sigstore bundle: %w", err)
	}
	return &b, nil
}

// verifyBundle verifies a bundle with sigstore-go: a DSSE in-toto statement
// whose subject is digest, signed by an allowed key or certificate
// identity. It returns the signer and the statement's predicate type.
func (v *Verifier) verifyBundle(b *bundle.Bundle, digest v1.Hash) (Signer, string, error) {
	if b.GetDsseEnvelope() == nil {
		return Signer{}, "", errors.New("a message-signature bundle names no subject: want a DSSE in-toto statement about the image digest")
	}
	vc, err := b.VerificationContent()
	if err != nil {
		return Signer{}, "", err
	}
	raw, err := hexBytes(digest.Hex)
	if err != nil {
		return Signer{}, "", err
	}
	artifact := verify.WithArtifactDigest("sha256", raw)
	if vc.PublicKey() != nil {
		return v.verifyWithKeys(b, artifact)
	}
	if v.keyless == nil {
		return Signer{}, "", errors.New("signed with a certificate, and no certificate identity is allowed")
	}
	var pol []verify.PolicyOption
	for _, id := range v.policy.certIDs {
		pol = append(pol, verify.WithCertificateIdentity(id))
	}
	res, err := v.keyless.Verify(b, verify.NewPolicy(artifact, pol...))
	if err != nil {
		return Signer{}, "", fmt.Errorf("keyless: %w", err)
	}
	s := Signer{}
	if c := res.Signature.Certificate; c != nil {
		s.Identity, s.Issuer = c.SubjectAlternativeName, c.Issuer
	}
	return s, predicate(res), nil
}

func (v *Verifier) verifyWithKeys(b *bundle.Bundle, artifact verify.ArtifactPolicyOption) (Signer, string, error) {
	if len(v.policy.Keys) == 0 {
		return Signer{}, "", errors.New("signed with a key, and no key is allowed")
	}
	var errs []error
	for _, k := range v.policy.Keys {
		tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
			return root.NewExpiringKey(k.verifier, time.Time{}, time.Time{}), nil
		})
		kv, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
		if err != nil {
			return Signer{}, "", err
		}
		res, err := kv.Verify(b, verify.NewPolicy(artifact, verify.WithKey()))
		if err == nil {
			return Signer{Key: k.Fingerprint}, predicate(res), nil
		}
		errs = append(errs, fmt.Errorf("key %s: %w", k.Fingerprint, err))
	}
	return Signer{}, "", errors.Join(errs...)
}

func predicate(res *verify.VerificationResult) string {
	if res.Statement == nil {
		return ""
	}
	return res.Statement.PredicateType
}
