package signature

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
)

// maxKeyFile and maxTrustedRoot bound the files a policy reads.
const (
	maxKeyFile     = 64 << 10
	maxTrustedRoot = 4 << 20
)

// Spec is a policy as configured: files to read and identities to allow.
type Spec struct {
	// KeyFiles are cosign public keys (PEM "PUBLIC KEY").
	KeyFiles []string
	// Identities are the certificate identities allowed to sign keylessly.
	Identities []Identity
	// TrustedRootFile is sigstore's trusted_root.json, required with
	// Identities.
	TrustedRootFile string
	// Attestations are in-toto predicate types that must each be attested
	// by an allowed signer, beside the signature.
	Attestations []string
}

// Identity is one allowed certificate identity: the subject alternative
// name and the OIDC issuer, each exact or a regular expression (one of the
// two is required for each).
type Identity struct {
	Identity       string
	IdentityRegexp string
	Issuer         string
	IssuerRegexp   string
}

// String is the identity as a reader would write it.
func (i Identity) String() string {
	id, is := i.Identity, i.Issuer
	if id == "" {
		id = "~" + i.IdentityRegexp
	}
	if is == "" {
		is = "~" + i.IssuerRegexp
	}
	return id + " (issuer " + is + ")"
}

// Policy is a Spec read and checked, ready to verify with.
type Policy struct {
	Keys       []Key
	Identities []Identity
	certIDs    []verify.CertificateIdentity
	// TrustedRoot is the parsed trusted root; nil without Identities.
	TrustedRoot *root.TrustedRoot
	// TrustedRootDigest is "sha256:<hex>" of the trusted root file.
	TrustedRootDigest string
	Attestations      []string
}

// Key is an allowed public key.
type Key struct {
	// Fingerprint is "sha256:<hex>" of the key's DER SubjectPublicKeyInfo.
	Fingerprint string
	// File is where it was read from.
	File     string
	public   crypto.PublicKey
	verifier sigsig.Verifier
}

// UsageError is a policy that cannot be used as written: a key file that is
// missing or is not a public key, an identity that does not compile.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// TrustRootError is a trusted root that could not be read or parsed: no
// signature can be judged, so it is no verdict.
type TrustRootError struct {
	File string
	Err  error
}

func (e *TrustRootError) Error() string {
	return fmt.Sprintf("reading the trusted root %s: %v", e.File, e.Err)
}
func (e *TrustRootError) Unwrap() error { return e.Err }

// Empty reports whether the spec allows no signer: no signature check.
func (s Spec) Empty() bool { return len(s.KeyFiles) == 0 && len(s.Identities) == 0 }

// Load reads a Spec's files. A bad key or identity is a *UsageError; a
// trusted root that cannot be read or parsed is a *TrustRootError.
func Load(s Spec) (*Policy, error) {
	if s.Empty() {
		return nil, &UsageError{Err: errors.New("no allowed signer: give a public key or a certificate identity")}
	}
	p := &Policy{Identities: slices.Clone(s.Identities), Attestations: slices.Clone(s.Attestations)}
	for _, f := range s.KeyFiles {
		k, err := LoadKey(f)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		p.Keys = append(p.Keys, k)
	}
	for _, id := range s.Identities {
		ci, err := certificateIdentity(id)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		p.certIDs = append(p.certIDs, ci)
	}
	for _, a := range s.Attestations {
		if strings.TrimSpace(a) == "" {
			return nil, &UsageError{Err: errors.New("attestations: empty predicate type")}
		}
	}
	if len(s.Identities) == 0 {
		return p, nil
	}
	if s.TrustedRootFile == "" {
		return nil, &UsageError{Err: errors.New("a certificate identity needs a trusted root (--trusted-root, spec.images.signatures.trustedRoot): keyless signatures are verified offline against it")}
	}
	data, err := readBounded(s.TrustedRootFile, maxTrustedRoot)
	if err != nil {
		return nil, &TrustRootError{File: s.TrustedRootFile, Err: err}
	}
	tr, err := root.NewTrustedRootFromJSON(data)
	if err != nil {
		return nil, &TrustRootError{File: s.TrustedRootFile, Err: err}
	}
	if len(tr.FulcioCertificateAuthorities()) == 0 {
		return nil, &TrustRootError{File: s.TrustedRootFile, Err: errors.New("it lists no certificate authority")}
	}
	p.TrustedRoot = tr
	sum := sha256.Sum256(data)
	p.TrustedRootDigest = "sha256:" + hex.EncodeToString(sum[:])
	return p, nil
}

func certificateIdentity(id Identity) (verify.CertificateIdentity, error) {
	switch {
	case id.Identity == "" && id.IdentityRegexp == "":
		return verify.CertificateIdentity{}, errors.New("a certificate identity needs --certificate-identity or --certificate-identity-regexp (identity or identityRegexp)")
	case id.Issuer == "" && id.IssuerRegexp == "":
		return verify.CertificateIdentity{}, fmt.Errorf("certificate identity %s needs --certificate-oidc-issuer or --certificate-oidc-issuer-regexp (issuer or issuerRegexp)", id)
	case id.Identity != "" && id.IdentityRegexp != "":
		return verify.CertificateIdentity{}, errors.New("give the certificate identity exactly or as a regular expression, not both")
	case id.Issuer != "" && id.IssuerRegexp != "":
		return verify.CertificateIdentity{}, errors.New("give the OIDC issuer exactly or as a regular expression, not both")
	}
	for _, re := range []string{id.IdentityRegexp, id.IssuerRegexp} {
		if _, err := regexp.Compile(re); err != nil {
			return verify.CertificateIdentity{}, fmt.Errorf("certificate identity %s: %w", id, err)
		}
	}
	ci, err := verify.NewShortCertificateIdentity(id.Issuer, id.IssuerRegexp, id.Identity, id.IdentityRegexp)
	if err != nil {
		return verify.CertificateIdentity{}, fmt.Errorf("certificate identity %s: %w", id, err)
	}
	return ci, nil
}

// LoadKey reads a cosign public key (PEM).
func LoadKey(file string) (Key, error) {
	data, err := readBounded(file, maxKeyFile)
	if err != nil {
		return Key{}, fmt.Errorf("reading public key: %w", err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(data)
	if err != nil {
		return Key{}, fmt.Errorf("public key %s: %w", file, err)
	}
	k, err := NewKey(pub)
	if err != nil {
		return Key{}, fmt.Errorf("public key %s: %w", file, err)
	}
	k.File = file
	return k, nil
}

// NewKey makes a Key of a public key.
func NewKey(pub crypto.PublicKey) (Key, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return Key{}, err
	}
	v, err := sigsig.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return Key{}, err
	}
	sum := sha256.Sum256(der)
	return Key{Fingerprint: "sha256:" + hex.EncodeToString(sum[:]), public: pub, verifier: v}, nil
}

func readBounded(file string, limit int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, limit)
	}
	return data, nil
}

// ID names the policy for a cache key: its keys, identities, trusted root
// and attestations. Two runs with the same ID judge alike.
func (p *Policy) ID() string {
	h := sha256.New()
	for _, k := range p.Keys {
		fmt.Fprintf(h, "key\x00%s\x00", k.Fingerprint)
	}
	for _, id := range p.Identities {
		fmt.Fprintf(h, "id\x00%s\x00%s\x00%s\x00%s\x00", id.Identity, id.IdentityRegexp, id.Issuer, id.IssuerRegexp)
	}
	fmt.Fprintf(h, "root\x00%s\x00", p.TrustedRootDigest)
	for _, a := range p.Attestations {
		fmt.Fprintf(h, "att\x00%s\x00", a)
	}
	return hex.EncodeToString(h.Sum(nil))
}
