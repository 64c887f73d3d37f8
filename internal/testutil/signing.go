package testutil

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"google.golang.org/protobuf/encoding/protojson"
)

// Sigstore media types and cosign's names, as cosign writes them.
const (
	bundleMediaType        = "application/vnd.dev.sigstore.bundle.v0.3+json"
	simpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	signatureAnnotation    = "dev.cosignproject.cosign/signature"
	cosignSignPredicate    = "https://sigstore.dev/cosign/sign/v1"
)

// Signer is an ECDSA P-256 signing key made for a test (sigstore-go's
// ephemeral keypair), its public key written as a cosign public key file.
type Signer struct {
	kp      *sign.EphemeralKeypair
	PubFile string
}

// NewSigner makes a key and writes its public key.
func NewSigner(t testing.TB) *Signer {
	t.Helper()
	kp, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := cryptoutils.MarshalPublicKeyToPEM(kp.GetPublicKey())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(p, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return &Signer{kp: kp, PubFile: p}
}

// Digest parses "host/repo@sha256:…".
func Digest(t testing.TB, ref string) name.Digest {
	t.Helper()
	d, err := name.NewDigest(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// SignBundle signs an in-toto statement about image (of predicateType;
// "" is cosign's signature statement) with sigstore-go's signing code and
// attaches the bundle to image as an OCI referrer, as cosign sign
// --new-bundle-format does with a key. It returns the referrer's digest.
func (s *Signer) SignBundle(t testing.TB, image name.Digest, predicateType string) string {
	t.Helper()
	if predicateType == "" {
		predicateType = cosignSignPredicate
	}
	h, err := v1.NewHash(image.DigestStr())
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": image.Context().Name(), "digest": map[string]string{"sha256": h.Hex}}},
		"predicateType": predicateType,
		"predicate":     map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := sign.Bundle(&sign.DSSEData{Data: stmt, PayloadType: "application/vnd.in-toto+json"}, s.kp, sign.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return pushReferrer(t, image, data)
}

// pushReferrer pushes an OCI manifest whose one layer is a bundle and whose
// subject is image (go-containerregistry updates the referrers tag of a
// registry without the referrers API).
func pushReferrer(t testing.TB, image name.Digest, bundle []byte) string {
	t.Helper()
	repo := image.Context()
	cfg := static.NewLayer([]byte("{}"), "application/vnd.oci.empty.v1+json")
	layer := static.NewLayer(bundle, bundleMediaType)
	desc := func(l v1.Layer, mt types.MediaType) v1.Descriptor {
		if err := remote.WriteLayer(repo, l); err != nil {
			t.Fatal(err)
		}
		d, _ := l.Digest()
		n, _ := l.Size()
		return v1.Descriptor{MediaType: mt, Digest: d, Size: n}
	}
	sub, err := remote.Head(image)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: bundleMediaType,
		Config:  desc(cfg, "application/vnd.oci.empty.v1+json"),
		Layers:  []v1.Descriptor{desc(layer, bundleMediaType)},
		Subject: &v1.Descriptor{MediaType: sub.MediaType, Digest: sub.Digest, Size: sub.Size}})
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ := v1.SHA256(bytes.NewReader(raw))
	if err := remote.Put(repo.Digest(h.String()), rawManifest{raw}); err != nil {
		t.Fatal(err)
	}
	return h.String()
}

type rawManifest struct{ raw []byte }

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

// PushLegacySignature pushes cosign's legacy signature to image's
// sha256-<hex>.sig tag: a simple-signing payload naming payloadDigest
// (image's own digest when ""), signed as cosign signs it (ECDSA over the
// payload's SHA-256).
func (s *Signer) PushLegacySignature(t testing.TB, image name.Digest, payloadDigest string) {
	t.Helper()
	if payloadDigest == "" {
		payloadDigest = image.DigestStr()
	}
	payload := []byte(fmt.Sprintf(`{"critical":{"identity":{"docker-reference":%q},"image":{"docker-manifest-digest":%q},"type":"cosign container image signature"},"optional":null}`,
		image.Context().Name(), payloadDigest))
	sig, _, err := s.kp.SignData(context.Background(), payload)
	if err != nil {
		t.Fatal(err)
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:       static.NewLayer(payload, simpleSigningMediaType),
		Annotations: map[string]string{signatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := v1.NewHash(image.DigestStr())
	if err := remote.Write(image.Context().Tag(h.Algorithm+"-"+h.Hex+".sig"), img); err != nil {
		t.Fatal(err)
	}
}
