package signature_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/kubectl-gate/kubectl-gate/internal/signature"
	"github.com/kubectl-gate/kubectl-gate/internal/testutil"
)

// testRegistry is go-containerregistry's in-process registry on loopback,
// its requests counted by path and optionally refused.
type testRegistry struct {
	host      string
	referrers atomic.Int64 // GET /v2/…/referrers/…
	fallback  atomic.Int64 // manifest requests for a sha256-<hex> tag
	all       atomic.Int64 // every request
	refuse    func(*http.Request) bool
}

func newRegistry(t *testing.T, referrersAPI bool) *testRegistry {
	t.Helper()
	opts := []registry.Option{registry.Logger(log.New(io.Discard, "", 0))}
	if referrersAPI {
		opts = append(opts, registry.WithReferrersSupport(true))
	}
	reg := registry.New(opts...)
	tr := &testRegistry{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.all.Add(1)
		if strings.Contains(r.URL.Path, "/referrers/") {
			tr.referrers.Add(1)
		}
		if strings.Contains(r.URL.Path, "/manifests/sha256-") {
			tr.fallback.Add(1)
		}
		if tr.refuse != nil && tr.refuse(r) {
			http.Error(w, "refused by the test", http.StatusInternalServerError)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tr.host = strings.TrimPrefix(srv.URL, "http://")
	return tr
}

// push writes a random image to repo:tag and returns its digest reference.
func (r *testRegistry) push(t *testing.T, repo string) name.Digest {
	t.Helper()
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(r.host + "/" + repo + ":1.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return ref.Context().Digest(d.String())
}

func statement(t *testing.T, subject name.Digest, predicateType string) []byte {
	t.Helper()
	h, err := v1.NewHash(subject.DigestStr())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": subject.Context().Name(), "digest": map[string]string{"sha256": h.Hex}}},
		"predicateType": predicateType,
		"predicate":     map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// keyBundle signs a statement about subject with kp, by sigstore-go's
// signing code, as cosign sign --new-bundle-format does with a key.
func keyBundle(t *testing.T, kp sign.Keypair, subject name.Digest, predicateType string) []byte {
	t.Helper()
	pb, err := sign.Bundle(&sign.DSSEData{Data: statement(t, subject, predicateType), PayloadType: "application/vnd.in-toto+json"}, kp, sign.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func keyFile(t *testing.T, pub crypto.PublicKey) string {
	t.Helper()
	pemBytes, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(p, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// rawManifest is a manifest pushed as written.
type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mt, nil }

// pushReferrer pushes an OCI manifest carrying data as its one layer, with
// the given artifactType and subject, as cosign attaches a bundle. It
// returns the manifest's descriptor.
func pushReferrer(t *testing.T, subject name.Digest, artifactType string, data []byte) v1.Descriptor {
	t.Helper()
	repo := subject.Context()
	cfg := static.NewLayer([]byte("{}"), "application/vnd.oci.empty.v1+json")
	layer := static.NewLayer(data, signature.BundleMediaType)
	for _, l := range []v1.Layer{cfg, layer} {
		if err := remote.WriteLayer(repo, l); err != nil {
			t.Fatal(err)
		}
	}
	desc := func(l v1.Layer, mt types.MediaType) v1.Descriptor {
		d, _ := l.Digest()
		s, _ := l.Size()
		return v1.Descriptor{MediaType: mt, Digest: d, Size: s}
	}
	sub, err := remote.Head(subject)
	if err != nil {
		t.Fatal(err)
	}
	m := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: artifactType,
		Config:  desc(cfg, "application/vnd.oci.empty.v1+json"),
		Layers:  []v1.Descriptor{desc(layer, signature.BundleMediaType)},
		Subject: &v1.Descriptor{MediaType: sub.MediaType, Digest: sub.Digest, Size: sub.Size}}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	h, size, _ := v1.SHA256(bytes.NewReader(raw))
	if err := remote.Put(repo.Digest(h.String()), rawManifest{raw: raw, mt: types.OCIManifestSchema1}); err != nil {
		t.Fatal(err)
	}
	return v1.Descriptor{MediaType: types.OCIManifestSchema1, Digest: h, Size: size, ArtifactType: artifactType}
}

// pushLegacy pushes cosign's legacy signature of signed (a simple-signing
// payload naming payloadDigest, signed with key) to subject's sha256-<hex>.sig tag.
func pushLegacy(t *testing.T, subject name.Digest, payloadDigest string, key *ecdsa.PrivateKey) {
	t.Helper()
	payload := []byte(fmt.Sprintf(`{"critical":{"identity":{"docker-reference":%q},"image":{"docker-manifest-digest":%q},"type":"cosign container image signature"},"optional":null}`,
		subject.Context().Name(), payloadDigest))
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:       static.NewLayer(payload, signature.SimpleSigningMediaType),
		Annotations: map[string]string{signature.SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := v1.NewHash(subject.DigestStr())
	if err := remote.Write(subject.Context().Tag(signature.SigTag(h)), img); err != nil {
		t.Fatal(err)
	}
}

func verifier(t *testing.T, spec signature.Spec) *signature.Verifier {
	t.Helper()
	p, err := signature.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.New(p, signature.Direct{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func ephemeral(t *testing.T) (*sign.EphemeralKeypair, string) {
	t.Helper()
	kp, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		t.Fatal(err)
	}
	return kp, keyFile(t, kp.GetPublicKey())
}

func TestBundleByReferrersAPI(t *testing.T) {
	reg := newRegistry(t, true)
	img := reg.push(t, "shop/web")
	kp, pub := ephemeral(t)
	desc := pushReferrer(t, img, signature.BundleMediaType, keyBundle(t, kp, img, signature.CosignSignPredicate))

	res := verifier(t, signature.Spec{KeyFiles: []string{pub}}).Verify(context.Background(), img.String())
	if !res.Verified || res.Err != nil {
		t.Fatalf("want verified, got %+v (%s)", res, res.Explain())
	}
	k, _ := signature.LoadKey(pub)
	if res.Signer.Key != k.Fingerprint || res.Evidence != desc.Digest.String() || res.Via != "referrers" {
		t.Errorf("got signer %+v evidence %s via %s, want key %s evidence %s", res.Signer, res.Evidence, res.Via, k.Fingerprint, desc.Digest)
	}
	if reg.referrers.Load() == 0 {
		t.Error("the referrers API was not asked")
	}
}

func TestBundleByReferrersTagFallback(t *testing.T) {
	reg := newRegistry(t, false) // no referrers API: 404
	img := reg.push(t, "shop/web")
	kp, pub := ephemeral(t)
	pushReferrer(t, img, signature.BundleMediaType, keyBundle(t, kp, img, signature.CosignSignPredicate))
	before := reg.fallback.Load()

	res := verifier(t, signature.Spec{KeyFiles: []string{pub}}).Verify(context.Background(), img.String())
	if !res.Verified {
		t.Fatalf("want verified through the referrers tag, got %s", res.Explain())
	}
	if reg.referrers.Load() == 0 || reg.fallback.Load() == before {
		t.Errorf("want the referrers API asked (%d) and then the sha256-<hex> tag (%d requests)", reg.referrers.Load(), reg.fallback.Load()-before)
	}
}

func TestLegacySigTag(t *testing.T) {
	reg := newRegistry(t, true)
	img := reg.push(t, "shop/api")
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pushLegacy(t, img, img.DigestStr(), key)

	res := verifier(t, signature.Spec{KeyFiles: []string{keyFile(t, key.Public())}}).Verify(context.Background(), img.String())
	if !res.Verified || res.Via != "legacy .sig tag" {
		t.Fatalf("want verified by the legacy tag, got %+v: %s", res, res.Explain())
	}
}

func TestRefused(t *testing.T) {
	reg := newRegistry(t, false)
	kp, pub := ephemeral(t)
	other, otherPub := ephemeral(t)
	_ = otherPub
	legacyKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	allowed := signature.Spec{KeyFiles: []string{pub, keyFile(t, legacyKey.Public())}}

	cases := []struct {
		name string
		set  func(img name.Digest)
		want string
	}{
		{"unsigned", func(name.Digest) {}, "no signature found"},
		{"signed by another key", func(img name.Digest) {
			pushReferrer(t, img, signature.BundleMediaType, keyBundle(t, other, img, signature.CosignSignPredicate))
		}, "failed to verify signature"},
		{"bundle about another digest", func(img name.Digest) {
			elsewhere := reg.push(t, "shop/other")
			pushReferrer(t, img, signature.BundleMediaType, keyBundle(t, kp, elsewhere, signature.CosignSignPredicate))
		}, "failed to verify"},
		{"legacy payload naming another digest", func(img name.Digest) {
			elsewhere := reg.push(t, "shop/other")
			pushLegacy(t, img, elsewhere.DigestStr(), legacyKey)
		}, "not this digest"},
		{"legacy signed by another key", func(img name.Digest) {
			k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			pushLegacy(t, img, img.DigestStr(), k)
		}, "does not verify with the allowed key"},
		{"artifactType lies in the index", func(img name.Digest) {
			// A valid bundle in a manifest that says it is an SBOM, listed
			// by a referrers index that says it is a bundle.
			d := pushReferrer(t, img, "application/spdx+json", keyBundle(t, kp, img, signature.CosignSignPredicate))
			d.ArtifactType = signature.BundleMediaType
			raw, err := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{d}})
			if err != nil {
				t.Fatal(err)
			}
			h, _ := v1.NewHash(img.DigestStr())
			if err := remote.Put(img.Context().Tag(h.Algorithm+"-"+h.Hex), rawManifest{raw: raw, mt: types.OCIImageIndex}); err != nil {
				t.Fatal(err)
			}
		}, "not a sigstore bundle"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := reg.push(t, fmt.Sprintf("shop/red%d", i))
			c.set(img)
			res := verifier(t, allowed).Verify(context.Background(), img.String())
			if res.Verified || res.Err != nil {
				t.Fatalf("want refused, got verified=%v err=%v", res.Verified, res.Err)
			}
			if !strings.Contains(res.Explain(), c.want) {
				t.Errorf("explanation %q does not say %q", res.Explain(), c.want)
			}
		})
	}
}

func TestAttestationsRequired(t *testing.T) {
	reg := newRegistry(t, true)
	img := reg.push(t, "shop/web")
	kp, pub := ephemeral(t)
	pushReferrer(t, img, signature.BundleMediaType, keyBundle(t, kp, img, signature.CosignSignPredicate))
	const slsa = "https://slsa.dev/provenance/v1"
	spec := signature.Spec{KeyFiles: []string{pub}, Attestations: []string{slsa}}

	if res := verifier(t, spec).Verify(context.Background(), img.String()); res.Verified || !strings.Contains(res.Explain(), slsa) {
		t.Fatalf("without the attestation: want refused naming %s, got %+v: %s", slsa, res, res.Explain())
	}
	pushReferrer(t, img, signature.BundleMediaType, keyBundle(t, kp, img, slsa))
	res := verifier(t, spec).Verify(context.Background(), img.String())
	if !res.Verified || len(res.Attestations) != 1 || res.Attestations[0] != slsa {
		t.Fatalf("with the attestation: want verified with %s, got %+v: %s", slsa, res, res.Explain())
	}
}

func TestRegistryFailureIsNoVerdict(t *testing.T) {
	for _, where := range []string{"/referrers/", "/manifests/sha256-"} {
		t.Run(where, func(t *testing.T) {
			reg := newRegistry(t, true)
			img := reg.push(t, "shop/web")
			_, pub := ephemeral(t)
			reg.refuse = func(r *http.Request) bool { return strings.Contains(r.URL.Path, where) }
			res := verifier(t, signature.Spec{KeyFiles: []string{pub}}).Verify(context.Background(), img.String())
			if res.Err == nil || res.Verified {
				t.Fatalf("want a lookup error, got %+v", res)
			}
		})
	}
}

func TestOneLookupPerDigest(t *testing.T) {
	reg := newRegistry(t, true)
	img := reg.push(t, "shop/web")
	kp, pub := ephemeral(t)
	pushReferrer(t, img, signature.BundleMediaType, keyBundle(t, kp, img, signature.CosignSignPredicate))
	v := verifier(t, signature.Spec{KeyFiles: []string{pub}})
	reg.referrers.Store(0) // the push asked too
	tagged := img.Context().Name() + ":1.0@" + img.DigestStr()
	for _, ref := range []string{img.String(), tagged, img.String()} {
		if res := v.Verify(context.Background(), ref); !res.Verified {
			t.Fatalf("%s: %s", ref, res.Explain())
		}
	}
	if n := reg.referrers.Load(); n != 1 {
		t.Errorf("referrers asked %d times for one digest, want 1", n)
	}
}

func TestUnreadableTrustedRoot(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(bad, []byte(`{"mediaType": "nonsense"`), 0o600); err != nil {
		t.Fatal(err)
	}
	id := []signature.Identity{{Identity: "ci@example.com", Issuer: "https://issuer.example"}}
	for _, file := range []string{bad, filepath.Join(t.TempDir(), "missing.json")} {
		_, err := signature.Load(signature.Spec{Identities: id, TrustedRootFile: file})
		var tre *signature.TrustRootError
		if !errors.As(err, &tre) {
			t.Errorf("%s: want a trusted root error, got %v", file, err)
		}
	}
	_, err := signature.Load(signature.Spec{Identities: id})
	var ue *signature.UsageError
	if !errors.As(err, &ue) {
		t.Errorf("an identity without a trusted root: want a usage error, got %v", err)
	}
}

// virtualSigstore is sigstore-go's test certificate authority, transparency
// log and timestamp authority, and its trusted_root.json file.
func virtualSigstore(t *testing.T) (*ca.VirtualSigstore, string) {
	t.Helper()
	s := testutil.NewSigstore(t)
	return s.Authority(), s.RootFile
}

// keylessBundle has the virtual sigstore sign a statement about subject
// for identity, and packs it as a v0.3 bundle (certificate, DSSE envelope,
// transparency log entry with its inclusion proof, RFC 3161 timestamp).
func keylessBundle(t *testing.T, vs *ca.VirtualSigstore, identity, issuer string, subject name.Digest) []byte {
	t.Helper()
	e, err := vs.AttestAtTime(identity, issuer, statement(t, subject, signature.CosignSignPredicate), timeNow().Add(fiveMinutes), true)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	env := sc.EnvelopeContent().RawEnvelope()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var sigs []*protodsse.Signature
	for _, s := range env.Signatures {
		raw, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, &protodsse.Signature{Sig: raw, Keyid: s.KeyID})
	}
	entries, _ := e.TlogEntries()
	var tles []*protorekor.TransparencyLogEntry
	for _, te := range entries {
		// The test log's entry carries its promise (SET) apart and no kind:
		// a bundle carries both in the entry.
		tle := proto.Clone(te.TransparencyLogEntry()).(*protorekor.TransparencyLogEntry)
		tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
		set, err := vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
			IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId)})
		if err != nil {
			t.Fatal(err)
		}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
		tles = append(tles, tle)
	}
	stamps, _ := e.Timestamps()
	var ts []*protocommon.RFC3161SignedTimestamp
	for _, s := range stamps {
		ts = append(ts, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: s})
	}
	pb := &protobundle.Bundle{
		MediaType: signature.BundleMediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:                   &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TlogEntries:               tles,
			TimestampVerificationData: &protobundle.TimestampVerificationData{Rfc3161Timestamps: ts},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{Payload: payload, PayloadType: env.PayloadType, Signatures: sigs}},
	}
	b, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKeyless(t *testing.T) {
	reg := newRegistry(t, true)
	vs, rootFile := virtualSigstore(t)
	const issuer = "https://token.actions.githubusercontent.com"
	const id = "https://github.com/shop/web/.github/workflows/release.yml@refs/heads/main"
	img := reg.push(t, "shop/web")
	pushReferrer(t, img, signature.BundleMediaType, keylessBundle(t, vs, id, issuer, img))

	cases := []struct {
		name   string
		ids    []signature.Identity
		verify bool
	}{
		{"right identity", []signature.Identity{{Identity: id, Issuer: issuer}}, true},
		{"identity by regexp", []signature.Identity{{IdentityRegexp: `^https://github\.com/shop/`, IssuerRegexp: `^https://token\.actions\.`}}, true},
		{"wrong identity", []signature.Identity{{Identity: "https://github.com/mallory/web/.github/workflows/x.yml@refs/heads/main", Issuer: issuer}}, false},
		{"wrong issuer", []signature.Identity{{Identity: id, Issuer: "https://accounts.google.com"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := verifier(t, signature.Spec{Identities: c.ids, TrustedRootFile: rootFile}).Verify(context.Background(), img.String())
			if res.Err != nil || res.Verified != c.verify {
				t.Fatalf("want verified=%v, got %+v: %s", c.verify, res, res.Explain())
			}
			if c.verify && (res.Signer.Identity != id || res.Signer.Issuer != issuer) {
				t.Errorf("signer %+v, want %s / %s", res.Signer, id, issuer)
			}
		})
	}

	// The same bundle checked against another authority's root.
	_, otherRoot := virtualSigstore(t)
	res := verifier(t, signature.Spec{Identities: cases[0].ids, TrustedRootFile: otherRoot}).Verify(context.Background(), img.String())
	if res.Verified {
		t.Error("a bundle from another certificate authority verified")
	}
}

var timeNow = time.Now

const fiveMinutes = 5 * time.Minute
