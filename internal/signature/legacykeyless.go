package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// bundleV01 is the sigstore bundle version whose transparency-log entries
// carry an inclusion promise (Rekor's SignedEntryTimestamp) and no
// inclusion proof: what a legacy signature's annotations hold.
const bundleV01 = "application/vnd.dev.sigstore.bundle+json;version=0.1"

// rekorBundle is cosign's dev.sigstore.cosign/bundle annotation.
type rekorBundle struct {
	SignedEntryTimestamp []byte `json:"SignedEntryTimestamp"`
	Payload              struct {
		Body           string `json:"body"`
		IntegratedTime int64  `json:"integratedTime"`
		LogIndex       int64  `json:"logIndex"`
		LogID          string `json:"logID"`
	} `json:"Payload"`
}

// legacyKeyless verifies a keyless legacy signature (a certificate in the
// layer's annotations) with sigstore-go: its parts are put together as the
// v0.1 sigstore bundle they are (the certificate, the message signature
// over the payload, the transparency-log entry with its promise) and
// verified as a bundle is: the certificate chain to the trusted root's
// certificate authority, the log entry (its promise checked with the
// root's log key, its body matching the signature and certificate), the
// integrated time within the certificate's validity, and the allowed
// identity and issuer.
func (v *Verifier) legacyKeyless(l v1.Descriptor, payload, sig []byte) (Signer, error) {
	if v.keyless == nil {
		return Signer{}, errors.New("signed keylessly (a certificate), and no certificate identity is allowed")
	}
	b, err := legacyBundle(l, payload, sig)
	if err != nil {
		return Signer{}, err
	}
	var pol []verify.PolicyOption
	for _, id := range v.policy.certIDs {
		pol = append(pol, verify.WithCertificateIdentity(id))
	}
	res, err := v.keyless.Verify(b, verify.NewPolicy(verify.WithArtifact(bytes.NewReader(payload)), pol...))
	if err != nil {
		return Signer{}, fmt.Errorf("keyless: %w", err)
	}
	s := Signer{}
	if c := res.Signature.Certificate; c != nil {
		s.Identity, s.Issuer = c.SubjectAlternativeName, c.Issuer
	}
	return s, nil
}

// legacyBundle builds the v0.1 bundle of a keyless legacy signature.
func legacyBundle(l v1.Descriptor, payload, sig []byte) (*bundle.Bundle, error) {
	certs, err := cryptoutils.UnmarshalCertificatesFromPEMLimited([]byte(l.Annotations[CertificateAnnotation]), 10)
	if err != nil || len(certs) == 0 {
		return nil, fmt.Errorf("annotation %s is not a PEM certificate", CertificateAnnotation)
	}
	raw := l.Annotations[BundleAnnotation]
	if raw == "" {
		return nil, fmt.Errorf("a keyless signature without a transparency-log entry (annotation %s): it cannot be verified offline", BundleAnnotation)
	}
	var rb rekorBundle
	if err := json.Unmarshal([]byte(raw), &rb); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", BundleAnnotation, err)
	}
	body, err := base64.StdEncoding.DecodeString(rb.Payload.Body)
	if err != nil {
		return nil, fmt.Errorf("annotation %s: the entry body is not base64: %w", BundleAnnotation, err)
	}
	logID, err := hex.DecodeString(rb.Payload.LogID)
	if err != nil {
		return nil, fmt.Errorf("annotation %s: the log id is not hex: %w", BundleAnnotation, err)
	}
	var kind struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(body, &kind); err != nil || kind.Kind == "" || kind.APIVersion == "" {
		return nil, fmt.Errorf("annotation %s: the entry body names no kind and version", BundleAnnotation)
	}
	sum := sha256.Sum256(payload)
	pb := &protobundle.Bundle{
		MediaType: bundleV01,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_X509CertificateChain{X509CertificateChain: &protocommon.X509CertificateChain{
				Certificates: []*protocommon.X509Certificate{{RawBytes: certs[0].Raw}}}},
			TlogEntries: []*protorekor.TransparencyLogEntry{{
				LogIndex:          rb.Payload.LogIndex,
				LogId:             &protocommon.LogId{KeyId: logID},
				KindVersion:       &protorekor.KindVersion{Kind: kind.Kind, Version: kind.APIVersion},
				IntegratedTime:    rb.Payload.IntegratedTime,
				InclusionPromise:  &protorekor.InclusionPromise{SignedEntryTimestamp: rb.SignedEntryTimestamp},
				CanonicalizedBody: body,
			}},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig,
		}},
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		return nil, fmt.Errorf("the keyless signature's parts do not make a sigstore bundle: %w", err)
	}
	return b, nil
}
