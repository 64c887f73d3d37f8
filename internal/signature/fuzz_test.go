package signature

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

const fuzzDigest = "sha256:4315c8fd04a4a5b4e2a4dd3e4e1bd9ac6d5cf8d35d0f0a85e1b2a8b3e3a1c0d9"

// FuzzParseSimpleSigning feeds registry-controlled payloads (a .sig layer)
// to the simple-signing parser: it must never panic, and whatever it
// accepts names a valid digest.
func FuzzParseSimpleSigning(f *testing.F) {
	f.Add([]byte(`{"critical":{"identity":{"docker-reference":"ghcr.io/shop/web"},"image":{"docker-manifest-digest":"` + fuzzDigest + `"},"type":"cosign container image signature"},"optional":null}`))
	f.Add([]byte(`{"critical":{"image":{"docker-manifest-digest":"sha256:00"},"type":"cosign container image signature"}}`))
	f.Add([]byte(`{"critical":{"type":"atomic container signature"}}`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		h, err := ParseSimpleSigning(payload)
		if err != nil {
			return
		}
		if _, err := v1.NewHash(h.String()); err != nil {
			t.Fatalf("accepted payload names digest %q: %v", h, err)
		}
	})
}

// FuzzBundleLayer feeds registry-controlled referrer manifests to the
// check that picks the bundle layer: it must never panic, and a layer it
// returns is one bundle layer of a manifest about the digest.
func FuzzBundleLayer(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"` + BundleMediaType + `","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"layers":[{"mediaType":"` + BundleMediaType + `","digest":"` + fuzzDigest + `","size":100}],"subject":{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"` + fuzzDigest + `","size":10}}`))
	f.Add([]byte(`{"schemaVersion":2,"artifactType":"application/spdx+json","layers":[]}`))
	f.Add([]byte(`{"layers":[{},{}],"subject":{}}`))
	f.Add([]byte(`null`))
	digest, _ := v1.NewHash(fuzzDigest)
	f.Fuzz(func(t *testing.T, raw []byte) {
		l, why, _ := bundleLayer(raw, digest)
		if why == "" && string(l.MediaType) != BundleMediaType {
			t.Fatalf("accepted a layer of media type %q", l.MediaType)
		}
	})
}

// FuzzParseBundle feeds registry-controlled bundle blobs to sigstore-go's
// bundle parser as the gate calls it: it must never panic.
func FuzzParseBundle(f *testing.F) {
	f.Add([]byte(`{"mediaType":"` + BundleMediaType + `","verificationMaterial":{"publicKey":{"hint":"aGludA=="}},"dsseEnvelope":{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[{"sig":"MEUCIQ=="}]}}`))
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle+json;version=0.1"}`))
	f.Add([]byte(`{"mediaType":"` + BundleMediaType + `","messageSignature":{"signature":"AA=="}}`))
	f.Add([]byte(strings.Repeat("[", 64)))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBundle(data)
		if err == nil && b.GetDsseEnvelope() == nil && b.GetMessageSignature() == nil {
			t.Fatal("a bundle without content was accepted")
		}
	})
}

// FuzzLegacyBundle feeds registry-controlled annotations of a keyless
// legacy signature (the certificate and the transparency-log entry) to the
// code that builds their sigstore bundle: it must never panic, and what it
// accepts is a bundle sigstore-go validated.
func FuzzLegacyBundle(f *testing.F) {
	entry := `{"SignedEntryTimestamp":"MEUCIQ==","Payload":{"body":"eyJraW5kIjoiaGFzaGVkcmVrb3JkIiwiYXBpVmVyc2lvbiI6IjAuMC4xIn0=","integratedTime":1700000000,"logIndex":1,"logID":"c0d23d6ad406973f9559f3ba2d1ca01f84147d8ffc5b8445c224f98b9591801d"}}`
	f.Add("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", entry)
	f.Add("", entry)
	f.Add("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", `{"Payload":{"body":"!!"}}`)
	f.Add("x", `{"Payload":{"logID":"zz"}}`)
	f.Fuzz(func(t *testing.T, cert, rekor string) {
		l := v1.Descriptor{Annotations: map[string]string{CertificateAnnotation: cert, BundleAnnotation: rekor}}
		b, err := legacyBundle(l, []byte("{}"), []byte("sig"))
		if err == nil && b == nil {
			t.Fatal("no error and no bundle")
		}
	})
}
