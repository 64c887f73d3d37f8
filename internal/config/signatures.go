package config

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Signatures says who may sign the images a run pins or verifies
// (spec.images.signatures; the plugin's --key, --certificate-identity[-regexp],
// --certificate-oidc-issuer[-regexp] and --trusted-root).
type Signatures struct {
	// Keys are cosign public key files (PEM), relative to the config file.
	Keys []string `json:"keys,omitempty"`
	// Identities are the certificate identities allowed to sign keylessly.
	Identities []SignatureIdentity `json:"identities,omitempty"`
	// TrustedRoot is sigstore's trusted_root.json, relative to the config
	// file; required with Identities. It is read as it is: no TUF fetch.
	TrustedRoot string `json:"trustedRoot,omitempty"`
	// Attestations are in-toto predicate types (SLSA provenance:
	// https://slsa.dev/provenance/v1) each image must also carry a
	// verified attestation of, from an allowed signer.
	Attestations []string `json:"attestations,omitempty"`
}

// SignatureIdentity is one allowed certificate identity: the subject
// alternative name and the OIDC issuer, each exact or a regular expression.
type SignatureIdentity struct {
	Identity       string `json:"identity,omitempty"`
	IdentityRegexp string `json:"identityRegexp,omitempty"`
	Issuer         string `json:"issuer,omitempty"`
	IssuerRegexp   string `json:"issuerRegexp,omitempty"`
}

// Enabled reports whether signatures are required at all.
func (s *Signatures) Enabled() bool {
	return s != nil && (len(s.Keys) > 0 || len(s.Identities) > 0)
}

// Clone copies s, so that flags can add to it.
func (s *Signatures) Clone() *Signatures {
	if s == nil {
		return &Signatures{}
	}
	c := *s
	c.Keys = append([]string(nil), s.Keys...)
	c.Identities = append([]SignatureIdentity(nil), s.Identities...)
	c.Attestations = append([]string(nil), s.Attestations...)
	return &c
}

func (s *Signatures) validate() error {
	if s == nil {
		return nil
	}
	const at = "spec.images.signatures"
	var errs []error
	if !s.Enabled() && (s.TrustedRoot != "" || len(s.Attestations) > 0) {
		errs = append(errs, fmt.Errorf("%s: no allowed signer: give keys or identities", at))
	}
	for i, k := range s.Keys {
		if strings.TrimSpace(k) == "" {
			errs = append(errs, fmt.Errorf("%s.keys[%d]: empty path", at, i))
		}
	}
	for i, id := range s.Identities {
		if err := id.validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s.identities[%d]: %w", at, i, err))
		}
	}
	if len(s.Identities) > 0 && strings.TrimSpace(s.TrustedRoot) == "" {
		errs = append(errs, fmt.Errorf("%s.trustedRoot: required with identities (keyless signatures are verified offline against it)", at))
	}
	for i, a := range s.Attestations {
		if strings.TrimSpace(a) == "" {
			errs = append(errs, fmt.Errorf("%s.attestations[%d]: empty predicate type", at, i))
		}
	}
	return errors.Join(errs...)
}

func (id SignatureIdentity) validate() error {
	switch {
	case id.Identity == "" && id.IdentityRegexp == "":
		return errors.New("identity or identityRegexp is required (--certificate-identity[-regexp])")
	case id.Identity != "" && id.IdentityRegexp != "":
		return errors.New("identity and identityRegexp: give one")
	case id.Issuer == "" && id.IssuerRegexp == "":
		return errors.New("issuer or issuerRegexp is required (--certificate-oidc-issuer[-regexp])")
	case id.Issuer != "" && id.IssuerRegexp != "":
		return errors.New("issuer and issuerRegexp: give one")
	}
	for _, re := range []struct{ field, v string }{{"identityRegexp", id.IdentityRegexp}, {"issuerRegexp", id.IssuerRegexp}} {
		if _, err := regexp.Compile(re.v); err != nil {
			return fmt.Errorf("%s: %w", re.field, err)
		}
	}
	return nil
}
