package resolve

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubectl-gate/kubectl-gate/internal/images"
)

// userAgent is sent with every registry request.
const userAgent = "kubectl-gate"

// Resolver resolves image references to digests. It is safe for concurrent
// use; share one per run so that each image is asked about once and tokens
// are reused. Answers are kept for the Resolver's lifetime, failures
// included (a run asks once), except timeouts and cancellations, which
// depend on the asker's deadline and are asked again by a later call.
type Resolver struct {
	cfg     *config
	puller  *remote.Puller
	remote  []remote.Option
	cache   *diskCache
	secrets *secrets
	memo    *memo
	jobs    chan struct{}
	stats   *counters
}

var _ images.Resolver = (*Resolver)(nil)

// Stats counts what a Resolver has done so far.
type Stats struct {
	// Requests is the number of HTTP request attempts sent, pings, token
	// fetches and retries included.
	Requests int64
	// ManifestRequests is the number of manifest HEAD/GET attempts sent.
	ManifestRequests int64
	// Retries is the number of attempts that were retries.
	Retries int64
	// CacheHits is the number of answers read from the on-disk cache
	// (digests, and the records of [Resolver.Records]).
	CacheHits int64
	// MemoHits is the number of answers shared from memory: a reference
	// asked again, or asked while its look-up was under way.
	MemoHits int64
	// CacheErrors is the number of answers that could not be written to the
	// on-disk cache (the answers themselves were fine).
	CacheErrors int64
	// CacheRejects is the number of on-disk entries found but not trusted:
	// unreadable, not a regular file, unsigned or wrongly signed, or
	// answering another key (digests and records). Each was asked of the
	// registry instead.
	CacheRejects int64
}

// New validates opts, applies defaults, and returns a Resolver.
func New(opts Options) (*Resolver, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, fmt.Errorf("resolver options: %w", err)
	}
	r := &Resolver{cfg: cfg, secrets: newSecrets(), memo: newMemo(),
		jobs: make(chan struct{}, cfg.jobs), stats: &counters{}}
	r.cache, err = newDiskCache(cfg, func() { r.stats.cacheRejects.Add(1) })
	if err != nil {
		return nil, fmt.Errorf("resolver options: %w", err)
	}
	r.remote = r.remoteOptions()
	r.puller, err = remote.NewPuller(r.remote...)
	if err != nil {
		return nil, fmt.Errorf("resolver options: %w", err)
	}
	return r, nil
}

// remoteOptions builds one puller for the Resolver's lifetime: it keeps one
// authenticated transport (and so one bearer token) per repository. The
// library's own retries are switched off in favour of retrier, which honours
// Retry-After and the deadline.
func (r *Resolver) remoteOptions() []remote.Option {
	g := &guard{next: r.cfg.transport, insecure: r.cfg.insecure, secrets: r.secrets, stats: r.stats}
	rt := &retrier{next: g, retries: r.cfg.retries, timeout: r.cfg.requestTimeout, breaker: newBreaker(), stats: r.stats}
	return []remote.Option{
		remote.WithTransport(&integrity{next: rt}),
		remote.WithAuthFromKeychain(r.cfg.keychain),
		remote.WithRetryStatusCodes(),
		remote.WithRetryPredicate(func(error) bool { return false }),
		remote.WithUserAgent(userAgent),
		remote.WithJobs(r.cfg.jobs),
	}
}

// Remote returns how to ask about repo as the Resolver does: the
// repository with Options.Mirrors applied (plain HTTP when Options.Insecure
// lists its host) and the Resolver's options (its credentials and its one
// transport, which refuses unlisted plain HTTP, retries, checks every
// manifest answer, counts requests and redacts credentials), and its
// puller, so a repository's ping and token are not asked again. The
// signature check reads signatures through it.
func (r *Resolver) Remote(repo name.Repository) (name.Repository, []remote.Option, error) {
	look, err := r.lookupRepo(repo)
	if err != nil {
		return repo, nil, fmt.Errorf("registry settings for %s: %w", repo.Name(), err)
	}
	// The Resolver's puller too: its per-repository transports (the ping,
	// the token) are reused rather than set up again for every request.
	opts := append(append(make([]remote.Option, 0, len(r.remote)+1), r.remote...), remote.Reuse(r.puller))
	return look, opts, nil
}

// Resolve answers every reference in refs, keyed by the reference exactly as
// given; the map holds an entry for each. It returns when all are answered
// or Options.Timeout (or ctx) has ended; a reference that could not be
// answered carries an [*Error] and no digest. Repeated references, and
// spellings of one reference ("nginx", "docker.io/library/nginx:latest"),
// are looked up once.
func (r *Resolver) Resolve(ctx context.Context, refs []string) map[string]images.Resolution {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, r.cfg.timeout)
	defer cancel()
	out := make(map[string]images.Resolution, len(refs))
	groups := r.group(refs, out)
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, g := range groups {
		wg.Go(func() {
			digest, err := r.answer(ctx, g.target)
			if err != nil && ctx.Err() != nil && !memoizable(err) {
				err = &deadlineError{after: time.Since(start), err: err}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, raw := range g.raws {
				out[raw] = r.resolution(raw, digest, err)
			}
		})
	}
	wg.Wait()
	return out
}

// group is every spelling of one normalized reference in a Resolve call.
type group struct {
	target target
	raws   []string
}

// group parses refs once per spelling, answers malformed ones in out at
// once, and groups the rest by normalized reference.
func (r *Resolver) group(refs []string, out map[string]images.Resolution) map[string]*group {
	groups := map[string]*group{}
	seen := map[string]bool{}
	for _, raw := range refs {
		if seen[raw] {
			continue
		}
		seen[raw] = true
		t, err := r.parse(raw)
		if err != nil {
			out[raw] = r.resolution(raw, "", err)
			continue
		}
		if g, ok := groups[t.key]; ok {
			g.raws = append(g.raws, raw)
			continue
		}
		groups[t.key] = &group{target: t, raws: []string{raw}}
	}
	return groups
}

func (r *Resolver) answer(ctx context.Context, t target) (string, error) {
	digest, shared, err := r.memo.do(ctx, t.key, func(ctx context.Context) (string, error) {
		return r.lookup(ctx, t)
	})
	if shared {
		r.stats.shared.Add(1)
	}
	return digest, err
}

// lookup answers one target from the disk cache or the registry, holding
// one of the Options.Jobs slots while it talks to the registry.
func (r *Resolver) lookup(ctx context.Context, t target) (string, error) {
	if d, ok := r.cache.get(t.byDigest(), t.cacheKey); ok {
		r.stats.cacheHits.Add(1)
		return d, nil
	}
	release, err := r.acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	d, err := r.fetch(ctx, t)
	if err == nil && r.cache.put(t.byDigest(), t.cacheKey, d) != nil {
		r.stats.cacheErrors.Add(1)
	}
	return d, err
}

func (r *Resolver) acquire(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case r.jobs <- struct{}{}:
		return func() { <-r.jobs }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *Resolver) resolution(raw, digest string, err error) images.Resolution {
	if err == nil {
		return images.Resolution{Digest: digest}
	}
	return images.Resolution{Err: &Error{Ref: raw, Kind: classify(err), Err: r.secrets.wrap(err)}}
}

// Stats returns a snapshot of the Resolver's counters.
func (r *Resolver) Stats() Stats {
	return Stats{
		Requests:         r.stats.requests.Load(),
		ManifestRequests: r.stats.manifestRequests.Load(),
		Retries:          r.stats.retries.Load(),
		CacheHits:        r.stats.cacheHits.Load(),
		MemoHits:         r.stats.shared.Load(),
		CacheErrors:      r.stats.cacheErrors.Load(),
		CacheRejects:     r.stats.cacheRejects.Load(),
	}
}
