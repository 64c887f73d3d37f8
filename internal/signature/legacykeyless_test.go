package signature_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/kubectl-gate/kubectl-gate/internal/signature"
)

// pushLegacyKeyless pushes a keyless cosign signature in the legacy
// format, as cosign sign writes it without --new-bundle-format: the
// virtual sigstore's certificate signs the simple-signing payload naming
// payloadDigest, and the layer carries the signature, the certificate
// and the transparency-log entry with its promise (unless noLog).
func pushLegacyKeyless(t *testing.T, vs *ca.VirtualSigstore, identity, issuer string, subject name.Digest, payloadDigest string, noLog bool) {
	t.Helper()
	payload := []byte(fmt.Sprintf(`{"critical":{"identity":{"docker-reference":%q},"image":{"docker-manifest-digest":%q},"type":"cosign container image signature"},"optional":null}`,
		subject.Context().Name(), payloadDigest))
	e, err := vs.SignAtTime(identity, issuer, payload, timeNow().Add(fiveMinutes))
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	certPEM, err := cryptoutils.MarshalCertificateToPEM(vc.Certificate())
	if err != nil {
		t.Fatal(err)
	}
	ann := map[string]string{
		signature.SignatureAnnotation:   base64.StdEncoding.EncodeToString(sc.MessageSignatureContent().Signature()),
		signature.CertificateAnnotation: string(certPEM),
	}
	if !noLog {
		entries, _ := e.TlogEntries()
		tle := entries[0].TransparencyLogEntry()
		rp := tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
			IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId)}
		set, err := vs.RekorSignPayload(rp)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := json.Marshal(map[string]any{"SignedEntryTimestamp": set, "Payload": rp})
		ann[signature.BundleAnnotation] = string(rb)
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(payload, signature.SimpleSigningMediaType), Annotations: ann})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := v1.NewHash(subject.DigestStr())
	if err := remote.Write(subject.Context().Tag(signature.SigTag(h)), img); err != nil {
		t.Fatal(err)
	}
}

// TestLegacyKeyless: a keyless signature in cosign's legacy .sig format is
// verified with sigstore-go against the trusted root (right identity
// green; wrong identity, wrong issuer, another authority's root, no log
// entry, a payload for another digest and a key-only policy red, each
// saying why).
func TestLegacyKeyless(t *testing.T) {
	reg := newRegistry(t, false)
	vs, rootFile := virtualSigstore(t)
	_, otherRoot := virtualSigstore(t)
	const issuer = "https://token.actions.githubusercontent.com"
	const id = "https://github.com/shop/api/.github/workflows/release.yml@refs/heads/main"
	signed, noLog, replayed := reg.push(t, "shop/api"), reg.push(t, "shop/nolog"), reg.push(t, "shop/replayed")
	pushLegacyKeyless(t, vs, id, issuer, signed, signed.DigestStr(), false)
	pushLegacyKeyless(t, vs, id, issuer, noLog, noLog.DigestStr(), true)
	pushLegacyKeyless(t, vs, id, issuer, replayed, signed.DigestStr(), false)
	right := []signature.Identity{{Identity: id, Issuer: issuer}}
	_, pub := ephemeral(t)

	cases := []struct {
		name string
		spec signature.Spec
		img  name.Digest
		why  string // "" when it verifies
	}{
		{"right identity", signature.Spec{Identities: right, TrustedRootFile: rootFile}, signed, ""},
		{"identity by regexp", signature.Spec{Identities: []signature.Identity{{IdentityRegexp: `^https://github\.com/shop/`, Issuer: issuer}}, TrustedRootFile: rootFile}, signed, ""},
		{"right identity beside a key", signature.Spec{KeyFiles: []string{pub}, Identities: right, TrustedRootFile: rootFile}, signed, ""},
		{"wrong identity", signature.Spec{Identities: []signature.Identity{{Identity: "https://github.com/mallory/x/.github/workflows/x.yml@refs/heads/main", Issuer: issuer}}, TrustedRootFile: rootFile}, signed, "keyless:"},
		{"wrong issuer", signature.Spec{Identities: []signature.Identity{{Identity: id, Issuer: "https://accounts.google.com"}}, TrustedRootFile: rootFile}, signed, "keyless:"},
		{"another authority's root", signature.Spec{Identities: right, TrustedRootFile: otherRoot}, signed, "keyless:"},
		{"no transparency-log entry", signature.Spec{Identities: right, TrustedRootFile: rootFile}, noLog, "without a transparency-log entry"},
		{"a payload for another digest", signature.Spec{Identities: right, TrustedRootFile: rootFile}, replayed, "not this digest"},
		{"a key-only policy", signature.Spec{KeyFiles: []string{pub}}, signed, "does not verify with the allowed key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := verifier(t, c.spec).Verify(context.Background(), c.img.String())
			if res.Err != nil {
				t.Fatalf("lookup error: %v", res.Err)
			}
			if c.why == "" {
				if !res.Verified || res.Signer.Identity != id || res.Signer.Issuer != issuer || res.Via != "legacy .sig tag" {
					t.Fatalf("want verified as %s, got %+v: %s", id, res, res.Explain())
				}
				return
			}
			t.Log(res.Explain())
			if res.Verified || !strings.Contains(res.Explain(), c.why) {
				t.Fatalf("want refused saying %q, got verified=%v: %s", c.why, res.Verified, res.Explain())
			}
		})
	}
}
