package signature

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Cosign's legacy signature format: a manifest at tag sha256-<hex>.sig whose
// layers are simple-signing payloads, each with its signature in an
// annotation.
const (
	SimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	SignatureAnnotation    = "dev.cosignproject.cosign/signature"
	CertificateAnnotation  = "dev.sigstore.cosign/certificate"
	// BundleAnnotation is the transparency-log entry of a keyless legacy
	// signature: Rekor's SignedEntryTimestamp and the entry it signs.
	BundleAnnotation = "dev.sigstore.cosign/bundle"
	// CosignSignatureType is critical.type of a cosign payload.
	CosignSignatureType = "cosign container image signature"
)

const (
	maxPayload = 1 << 20
	maxLayers  = 64
)

// SigTag is cosign's legacy signature tag for digest: sha256-<hex>.sig.
func SigTag(digest v1.Hash) string {
	return digest.Algorithm + "-" + digest.Hex + ".sig"
}

// legacy reads cosign's sha256-<hex>.sig tag, if there is one, and verifies
// each payload with the allowed keys.
func (v *Verifier) legacy(repo name.Repository, digest v1.Hash, opts []remote.Option, f *found) {
	tag := SigTag(digest)
	desc, err := remote.Get(repo.Tag(tag), opts...)
	if notFound(err) {
		return
	}
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("reading the signature tag %s: %w", tag, err))
		return
	}
	m, err := v1.ParseManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		f.refuse(tag, "manifest does not parse: %v", err)
		return
	}
	for i, l := range m.Layers {
		if i == maxLayers {
			f.refuse(tag, "more than %d layers; the rest were not read", maxLayers)
			return
		}
		where := fmt.Sprintf("%s layer %d", tag, i)
		if string(l.MediaType) != SimpleSigningMediaType {
			f.refuse(where, "media type %q is not a simple-signing payload", l.MediaType)
			continue
		}
		payload, err := readBlob(repo, l, maxPayload, opts)
		if err != nil {
			f.errs = append(f.errs, fmt.Errorf("reading %s: %w", where, err))
			continue
		}
		signer, err := v.legacyLayer(l, payload, digest)
		if err != nil {
			f.refuse(where, "%v", err)
			continue
		}
		if f.signature == nil {
			f.signature = &Result{Signer: signer, Evidence: desc.Digest.String(), Via: "legacy .sig tag"}
		}
	}
}

// legacyLayer verifies one simple-signing layer: its payload must name
// digest, and its signature must verify with an allowed key or, with a
// certificate, as an allowed certificate identity.
func (v *Verifier) legacyLayer(l v1.Descriptor, payload []byte, digest v1.Hash) (Signer, error) {
	signed, err := ParseSimpleSigning(payload)
	if err != nil {
		return Signer{}, err
	}
	if signed != digest {
		return Signer{}, fmt.Errorf("the payload signs %s, not this digest (a signature copied from another image)", signed)
	}
	sig, err := decodeSignature(l.Annotations[SignatureAnnotation])
	if err != nil {
		return Signer{}, err
	}
	// A certificate says keyless (cosign may also attach one to a key's
	// signature, so allowed keys are tried after it).
	cert := l.Annotations[CertificateAnnotation] != ""
	var keyless error
	if cert && v.keyless != nil {
		s, err := v.legacyKeyless(l, payload, sig)
		if err == nil {
			return s, nil
		}
		keyless = err
	}
	if len(v.policy.Keys) == 0 {
		switch {
		case keyless != nil:
			return Signer{}, keyless
		case cert:
			return Signer{}, errors.New("signed keylessly (a certificate), and no certificate identity is allowed")
		}
		return Signer{}, errors.New("signed with a key, and no key is allowed")
	}
	var fps []string
	for _, k := range v.policy.Keys {
		if k.verifier.VerifySignature(bytes.NewReader(sig), bytes.NewReader(payload)) == nil {
			return Signer{Key: k.Fingerprint}, nil
		}
		fps = append(fps, k.Fingerprint)
	}
	err = fmt.Errorf("the signature does not verify with the allowed key(s) %s", strings.Join(fps, ", "))
	if keyless != nil {
		err = fmt.Errorf("%w; %w", keyless, err)
	}
	return Signer{}, err
}

// SimpleSigning is the part of a simple-signing payload the gate reads.
type SimpleSigning struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
}

// ParseSimpleSigning decodes a cosign simple-signing payload and returns
// the digest it signs (critical.image.docker-manifest-digest).
func ParseSimpleSigning(payload []byte) (v1.Hash, error) {
	var s SimpleSigning
	d := json.NewDecoder(bytes.NewReader(payload))
	if err := d.Decode(&s); err != nil {
		return v1.Hash{}, fmt.Errorf("payload is not a simple-signing document: %w", err)
	}
	if d.More() {
		return v1.Hash{}, errors.New("payload holds more than one JSON document")
	}
	if !strings.EqualFold(s.Critical.Type, CosignSignatureType) {
		return v1.Hash{}, fmt.Errorf("payload critical.type is %q, not %q", s.Critical.Type, CosignSignatureType)
	}
	h, err := v1.NewHash(s.Critical.Image.DockerManifestDigest)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("payload critical.image.docker-manifest-digest %q: %w", s.Critical.Image.DockerManifestDigest, err)
	}
	return h, nil
}

func decodeSignature(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("no signature annotation " + SignatureAnnotation)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("signature annotation is not base64: %w", err)
	}
	return b, nil
}

func hexBytes(s string) ([]byte, error) { return hex.DecodeString(s) }
