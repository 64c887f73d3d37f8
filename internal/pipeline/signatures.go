package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/imagelock"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/resolve"
	"github.com/kubectl-gate/kubectl-gate/internal/signature"
)

// signers shares one signature verifier per policy and resolver across the
// units of a run, so each unique digest is looked up once.
type signers struct {
	mu sync.Mutex
	m  map[string]*signatureCheck
}

// signaturesFor is the signature check of a unit whose spec names signers
// (nil when it names none), reading signatures through res. A key or
// identity that cannot be used is a usage error; a trusted root that
// cannot be read is no verdict.
func (s *session) signaturesFor(spec *config.Spec, res images.Resolver) (*signatureCheck, error) {
	sig := spec.Images.Signatures
	if !sig.Enabled() {
		return nil, nil
	}
	r, ok := res.(*resolve.Resolver)
	if !ok {
		return nil, fmt.Errorf("checking signatures: the resolver %T cannot read signatures", res)
	}
	in := signature.Spec{TrustedRootFile: s.configRelative(sig.TrustedRoot), Attestations: sig.Attestations}
	for _, k := range sig.Keys {
		in.KeyFiles = append(in.KeyFiles, s.configRelative(k))
	}
	for _, id := range sig.Identities {
		in.Identities = append(in.Identities, signature.Identity{Identity: id.Identity, IdentityRegexp: id.IdentityRegexp, Issuer: id.Issuer, IssuerRegexp: id.IssuerRegexp})
	}
	p, err := signature.Load(in)
	var ue *signature.UsageError
	switch {
	case errors.As(err, &ue):
		return nil, &config.UsageError{Where: "--key / --certificate-identity / spec.images.signatures", Err: err}
	case err != nil:
		return nil, fmt.Errorf("checking signatures: %w", err)
	}
	key := fmt.Sprintf("%s|%p", p.ID(), r)
	s.signers.mu.Lock()
	defer s.signers.mu.Unlock()
	if s.signers.m == nil {
		s.signers.m = map[string]*signatureCheck{}
	}
	if c, ok := s.signers.m[key]; ok {
		return c, nil
	}
	// Verified results are kept in the run's cache directory (--cache),
	// signed as its digests are.
	rec, err := r.Records("signatures")
	if err != nil {
		return nil, fmt.Errorf("checking signatures: %w", err)
	}
	var opts []signature.Option
	if rec != nil {
		opts = append(opts, signature.WithCache(rec))
	}
	v, err := signature.New(p, r, opts...)
	if err != nil {
		return nil, fmt.Errorf("checking signatures: %w", err)
	}
	c := &signatureCheck{v: v, jobs: max(s.o.Registry.Jobs, 1), timeout: s.o.Registry.Timeout}
	if c.timeout <= 0 {
		c.timeout = resolve.DefaultTimeout
	}
	s.signers.m[key] = c
	return c, nil
}

// configRelative resolves a path of the trusted config against its
// directory (flags give absolute paths).
func (s *session) configRelative(p string) string {
	if p == "" || filepath.IsAbs(p) || s.o.ConfigPath == "" {
		return p
	}
	return filepath.Join(filepath.Dir(s.o.ConfigPath), p)
}

// signatureCheck answers the gate's signature questions with a
// signature.Verifier, at most jobs digests at a time.
type signatureCheck struct {
	v       *signature.Verifier
	jobs    int
	timeout time.Duration
}

var _ images.SignatureVerifier = (*signatureCheck)(nil)

// VerifySignatures implements images.SignatureVerifier.
func (c *signatureCheck) VerifySignatures(ctx context.Context, refs []string) map[string]images.SignatureVerdict {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	out := make(map[string]images.SignatureVerdict, len(refs))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	sem := make(chan struct{}, c.jobs)
	for _, ref := range refs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			v := c.verdict(c.v.Verify(ctx, ref))
			mu.Lock()
			out[ref] = v
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func (c *signatureCheck) verdict(r signature.Result) images.SignatureVerdict {
	v := images.SignatureVerdict{Verified: r.Verified, Key: r.Signer.Key, Identity: r.Signer.Identity, Issuer: r.Signer.Issuer,
		Evidence: r.Evidence, Attestations: r.Attestations, Err: r.Err}
	if r.Verified && r.Signer.Key == "" {
		v.TrustedRoot = c.v.Policy().TrustedRootDigest
	}
	if !r.Verified {
		v.Explanation = r.Explain()
	}
	return v
}

// signLock adds to a lock entry who signed its digest, when the run
// verified it.
func (c *signatureCheck) signLock(e *imagelock.Entry, ref string) {
	if c == nil {
		return
	}
	r, ok := c.v.Lookup(ref)
	if !ok || !r.Verified {
		return
	}
	v := c.verdict(r)
	e.Signer = &imagelock.Signer{Key: v.Key, Identity: v.Identity, Issuer: v.Issuer}
	e.SignatureBundle = v.Evidence
	e.TrustedRoot = v.TrustedRoot
}
