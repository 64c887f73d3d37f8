package testutil

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Sigstore is sigstore-go's test certificate authority, transparency log
// and timestamp authority, with its trusted_root.json written to RootFile:
// keyless signing, verified offline.
type Sigstore struct {
	vs       *ca.VirtualSigstore
	RootFile string
}

// Authority is the test sigstore itself, for tests that sign with it
// beyond what Sigstore's methods do.
func (s *Sigstore) Authority() *ca.VirtualSigstore { return s.vs }

// NewSigstore makes a test sigstore and writes its trusted root.
func NewSigstore(t testing.TB) *Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	// The test log names itself by the hex of its key id; a trusted root
	// file holds the raw key id.
	logs := map[string]*root.TransparencyLog{}
	for id, l := range vs.RekorLogs() {
		raw, err := hex.DecodeString(id)
		if err != nil {
			t.Fatal(err)
		}
		c := *l
		c.ID = raw
		logs[id] = &c
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), nil, vs.TimestampingAuthorities(), logs)
	if err != nil {
		t.Fatal(err)
	}
	data, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return &Sigstore{vs: vs, RootFile: p}
}

// SignBundle has the test sigstore issue a certificate for identity and
// issuer, sign cosign's signature statement about image with it, and
// attaches the v0.3 bundle (certificate, DSSE envelope, log entry with its
// inclusion proof and promise, RFC 3161 timestamp) to image as an OCI
// referrer, as keyless cosign sign --new-bundle-format does. It returns
// the referrer's digest.
func (s *Sigstore) SignBundle(t testing.TB, image name.Digest, identity, issuer string) string {
	t.Helper()
	h, err := v1.NewHash(image.DigestStr())
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": image.Context().Name(), "digest": map[string]string{"sha256": h.Hex}}},
		"predicateType": cosignSignPredicate,
		"predicate":     map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.vs.AttestAtTime(identity, issuer, stmt, time.Now().Add(5*time.Minute), true)
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
	for _, sg := range env.Signatures {
		raw, err := base64.StdEncoding.DecodeString(sg.Sig)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, &protodsse.Signature{Sig: raw, Keyid: sg.KeyID})
	}
	entries, _ := e.TlogEntries()
	var tles []*protorekor.TransparencyLogEntry
	for _, te := range entries {
		// The test log's entry carries its promise (SET) apart and no kind:
		// a bundle carries both in the entry.
		tle := proto.Clone(te.TransparencyLogEntry()).(*protorekor.TransparencyLogEntry)
		tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
		set, err := s.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
			IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId)})
		if err != nil {
			t.Fatal(err)
		}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
		tles = append(tles, tle)
	}
	stamps, _ := e.Timestamps()
	var ts []*protocommon.RFC3161SignedTimestamp
	for _, st := range stamps {
		ts = append(ts, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: st})
	}
	pb := &protobundle.Bundle{
		MediaType: bundleMediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:                   &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TlogEntries:               tles,
			TimestampVerificationData: &protobundle.TimestampVerificationData{Rfc3161Timestamps: ts},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{Payload: payload, PayloadType: env.PayloadType, Signatures: sigs}},
	}
	data, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return pushReferrer(t, image, data)
}
