package signature

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// Registry is how a Verifier reaches an image's registry: the repository
// to ask (a mirror applied) and the options to ask with (transport,
// credentials). The resolver of a run provides it, so signatures are read
// over the same guarded transport as digests.
type Registry interface {
	Remote(repo name.Repository) (name.Repository, []remote.Option, error)
}

// Direct asks each repository's own registry with the given options.
type Direct []remote.Option

// Remote implements Registry.
func (d Direct) Remote(repo name.Repository) (name.Repository, []remote.Option, error) {
	return repo, d, nil
}

// Signer names who signed: a key by its fingerprint, or a certificate's
// identity and issuer.
type Signer struct {
	Key      string
	Identity string
	Issuer   string
}

// String is the signer as a message names it.
func (s Signer) String() string {
	if s.Key != "" {
		return "key " + s.Key
	}
	return s.Identity + " (issuer " + s.Issuer + ")"
}

// Refusal is a signature that was found and did not count.
type Refusal struct {
	// Where names it: "referrer sha256:…", "sha256-….sig layer 0".
	Where string
	Why   string
}

// Result is the verdict on one repository@digest.
type Result struct {
	// Verified is true when an allowed signer signed the digest and every
	// required attestation was verified.
	Verified bool
	Signer   Signer
	// Evidence is the digest of the manifest that carried the signature
	// that verified (the bundle's referrer manifest or the .sig manifest).
	Evidence string
	// Via says where it was found: "referrers" or "legacy .sig tag".
	Via string
	// Attestations are the predicate types of the verified attestations.
	Attestations []string
	// Cached is true when the result was read from the Cache, not looked up.
	Cached bool
	// Refused lists every signature found that did not count, and why.
	Refused []Refusal
	// Err is set when the registry (or the trusted root) failed while
	// looking: no verdict.
	Err error
}

// Explain says, for a digest that did not verify, what was found and why
// each was refused.
func (r Result) Explain() string {
	if r.Err != nil {
		return r.Err.Error()
	}
	if len(r.Refused) == 0 {
		return "no signature found (referrers API, referrers tag, legacy .sig tag)"
	}
	parts := make([]string, len(r.Refused))
	for i, f := range r.Refused {
		parts[i] = f.Where + ": " + f.Why
	}
	return "no valid signature from an allowed signer; found " + strings.Join(parts, "; ")
}

// Verifier verifies digests against a Policy. Safe for concurrent use;
// each repository@digest is looked up once for its lifetime, and, with a
// [Cache], once across runs while its verified result is kept.
type Verifier struct {
	policy  *Policy
	reg     Registry
	keyless *verify.Verifier
	cache   Cache

	lookups, cacheHits atomic.Int64

	mu   sync.Mutex
	memo map[string]*entry
}

// Option configures a Verifier.
type Option func(*Verifier)

// WithCache keeps verified results in c across runs (see [Cache]).
func WithCache(c Cache) Option { return func(v *Verifier) { v.cache = c } }

// Stats counts what a Verifier did.
type Stats struct {
	// Lookups is the number of digests looked up in a registry.
	Lookups int64
	// CacheHits is the number of digests answered by the Cache.
	CacheHits int64
}

// Stats returns the Verifier's counts so far.
func (v *Verifier) Stats() Stats {
	return Stats{Lookups: v.lookups.Load(), CacheHits: v.cacheHits.Load()}
}

type entry struct {
	once sync.Once
	res  Result
}

// New returns a Verifier for p that reaches registries through reg.
func New(p *Policy, reg Registry, opts ...Option) (*Verifier, error) {
	v := &Verifier{policy: p, reg: reg, memo: map[string]*entry{}}
	for _, o := range opts {
		o(v)
	}
	if p.TrustedRoot != nil {
		opts := []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1)}
		if len(p.TrustedRoot.CTLogs()) > 0 {
			opts = append(opts, verify.WithSignedCertificateTimestamps(1))
		}
		kv, err := verify.NewVerifier(p.TrustedRoot, opts...)
		if err != nil {
			return nil, &TrustRootError{File: "(trusted root)", Err: err}
		}
		v.keyless = kv
	}
	return v, nil
}

// Policy returns the Verifier's policy.
func (v *Verifier) Policy() *Policy { return v.policy }

// Verify judges ref, an image reference carrying a digest
// ("ghcr.io/shop/web:1.4@sha256:…"). A reference without a digest, or
// with one that is not sha256, is an error result.
func (v *Verifier) Verify(ctx context.Context, ref string) Result {
	d, err := name.NewDigest(ref)
	if err != nil {
		return Result{Err: fmt.Errorf("verifying signatures of %q: %w", ref, err)}
	}
	h, err := v1.NewHash(d.DigestStr())
	if err != nil || h.Algorithm != "sha256" {
		return Result{Err: fmt.Errorf("verifying signatures of %q: want a sha256 digest", ref)}
	}
	key := d.Context().Name() + "@" + h.String()
	v.mu.Lock()
	e, ok := v.memo[key]
	if !ok {
		e = &entry{}
		v.memo[key] = e
	}
	v.mu.Unlock()
	e.once.Do(func() {
		if r, ok := v.cached(key); ok {
			e.res = r
			return
		}
		v.lookups.Add(1)
		e.res = v.look(ctx, d.Context(), h)
		v.keep(key, e.res)
	})
	return e.res
}

// Lookup returns the result kept for ref, if it was verified already.
func (v *Verifier) Lookup(ref string) (Result, bool) {
	d, err := name.NewDigest(ref)
	if err != nil {
		return Result{}, false
	}
	v.mu.Lock()
	e, ok := v.memo[d.Context().Name()+"@"+d.DigestStr()]
	v.mu.Unlock()
	if !ok {
		return Result{}, false
	}
	e.once.Do(func() {}) // wait for a look-up under way
	return e.res, true
}

// found gathers what one look-up saw.
type found struct {
	signature    *Result // the first signature that verified
	attestations map[string]Result
	refused      []Refusal
	errs         []error
}

func (f *found) refuse(where, format string, args ...any) {
	f.refused = append(f.refused, Refusal{Where: where, Why: fmt.Sprintf(format, args...)})
}

func (v *Verifier) look(ctx context.Context, repo name.Repository, digest v1.Hash) Result {
	look, opts, err := v.reg.Remote(repo)
	if err != nil {
		return Result{Err: fmt.Errorf("verifying signatures of %s@%s: %w", repo.Name(), digest, err)}
	}
	opts = append(append([]remote.Option(nil), opts...), remote.WithContext(ctx))
	f := &found{attestations: map[string]Result{}}
	v.referrers(look, digest, opts, f)
	v.legacy(look, digest, opts, f)
	return v.decide(repo, digest, f)
}

// decide turns what was found into a Result: verified when a signature and
// every required attestation verified (a registry failure elsewhere does
// not matter then), else no verdict if the registry failed, else refused.
func (v *Verifier) decide(repo name.Repository, digest v1.Hash, f *found) Result {
	var missing []string
	for _, want := range v.policy.Attestations {
		if _, ok := f.attestations[want]; !ok {
			missing = append(missing, want)
		}
	}
	if f.signature != nil && len(missing) == 0 {
		r := *f.signature
		r.Verified = true
		for pt := range f.attestations {
			r.Attestations = append(r.Attestations, pt)
		}
		sort.Strings(r.Attestations)
		r.Refused = f.refused
		return r
	}
	if len(f.errs) > 0 {
		return Result{Err: fmt.Errorf("looking for signatures of %s@%s: %w", repo.Name(), digest, errors.Join(f.errs...)), Refused: f.refused}
	}
	r := Result{Refused: f.refused}
	if f.signature != nil {
		r.Refused = append(r.Refused, Refusal{Where: "attestations", Why: fmt.Sprintf("signed by %s, but no verified attestation of predicate type %s from an allowed signer", f.signature.Signer, strings.Join(missing, ", "))})
	}
	return r
}

// notFound reports whether err is a registry's "there is no such manifest".
func notFound(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range te.Errors {
		if d.Code == transport.ManifestUnknownErrorCode {
			return true
		}
	}
	return false
}
