package resolve

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Defaults applied by [New] to zero-valued [Options] fields.
const (
	DefaultJobs           = 8
	DefaultRequestTimeout = 10 * time.Second
	DefaultTimeout        = 2 * time.Minute
	DefaultRetries        = 3
	// DefaultDigestTTL is how long a cached "this digest exists" answer is
	// used before the registry is asked again: content behind a digest never
	// changes, but it can be deleted, and a look-up per day is cheap.
	DefaultDigestTTL = 24 * time.Hour
)

// minCacheKey is the shortest HMAC key a cache accepts.
const minCacheKey = 16

// maxRetries bounds Options.Retries so that a typo cannot turn a gate run
// into an hour of polite waiting.
const maxRetries = 10

// Options configures a [Resolver]. The zero value is a useful configuration:
// every zero field takes the default documented on it. [New] validates the
// options once; a Resolver never re-reads them.
type Options struct {
	// Jobs bounds how many registry look-ups run at once, across all
	// concurrent Resolve calls on the Resolver. Default 8.
	Jobs int
	// RequestTimeout bounds each HTTP request attempt, including reading its
	// body. Default 10s.
	RequestTimeout time.Duration
	// Timeout is the overall deadline of one Resolve call, retries and
	// Retry-After waits included. Default 2m.
	Timeout time.Duration
	// Retries is how many times a request is retried after a 408, 429, 5xx
	// (other than 501) or connection reset. 0 means the default, 3; a negative
	// value disables retries. At most 10.
	Retries int
	// Mirrors maps a registry host ("docker.io", "ghcr.io", "host:5000") to
	// the host, optionally followed by a path prefix, that look-ups are sent
	// to instead ("mirror.local:5000", "harbor.corp/dockerhub"). The
	// repository path is appended to the mirror. Answers are still given for
	// the original reference.
	Mirrors map[string]string
	// Insecure lists registry hosts (with port, if any) reached over plain
	// HTTP. Plain HTTP to any other host is refused, including the loopback
	// and private addresses go-containerregistry would otherwise try over
	// HTTP. A mirror host, or a token service on another host, must be
	// listed here itself if it needs plain HTTP.
	Insecure []string
	// Platform ("linux/arm64", "linux/arm/v7") makes a tag that points to a
	// multi-arch index resolve to the matching child manifest instead of the
	// index. Empty means the index digest.
	Platform string
	// Keychain finds credentials per repository. Default authn.DefaultKeychain
	// (docker config and credential helpers).
	Keychain authn.Keychain
	// Transport is the one HTTP transport all requests share. Default: a
	// clone of remote.DefaultTransport.
	Transport http.RoundTripper
	// CacheDir, when set, keeps answers on disk across runs: digest-existence
	// answers for DigestTTL, tag answers for TagTTL. The directory is created
	// private (0700); one that other users may write is refused. Every entry
	// is signed with CacheKey and checked on read; a tampered, forged,
	// misplaced or expired entry is asked afresh, never trusted.
	CacheDir string
	// CacheKey is the HMAC key entries are signed with, at least 16 bytes;
	// required with CacheDir. Keep it outside the cache directory: whoever
	// holds it can write answers the gate believes.
	CacheKey []byte
	// DigestTTL is how long a cached digest-existence answer is used.
	// 0 means DefaultDigestTTL.
	DigestTTL time.Duration
	// TagTTL is how long a cached tag → digest answer stays valid. 0 disables
	// the tag cache; it needs CacheDir.
	TagTTL time.Duration
	// NoTagCache disables the tag cache even when TagTTL is set, so every tag
	// is asked afresh (verify mode). Digest-existence answers are still cached.
	NoTagCache bool
	// Now is the clock used for cache ages. Default time.Now.
	Now func() time.Time
}

// config is Options after defaulting and validation.
type config struct {
	jobs           int
	requestTimeout time.Duration
	timeout        time.Duration
	retries        int
	mirrors        map[string]string
	insecure       map[string]bool
	platform       *v1.Platform
	keychain       authn.Keychain
	transport      http.RoundTripper
	cacheDir       string
	cacheKey       []byte
	tagTTL         time.Duration
	digestTTL      time.Duration
	now            func() time.Time
}

func (o Options) config() (*config, error) {
	c := &config{
		jobs:           orDefault(o.Jobs, DefaultJobs),
		requestTimeout: orDefault(o.RequestTimeout, DefaultRequestTimeout),
		timeout:        orDefault(o.Timeout, DefaultTimeout),
		retries:        orDefault(o.Retries, DefaultRetries),
		keychain:       o.Keychain,
		transport:      o.Transport,
		cacheDir:       o.CacheDir,
		cacheKey:       o.CacheKey,
		tagTTL:         o.TagTTL,
		digestTTL:      orDefault(o.DigestTTL, DefaultDigestTTL),
		now:            o.Now,
	}
	if err := o.checkNumbers(); err != nil {
		return nil, err
	}
	c.retries = max(c.retries, 0)
	if o.NoTagCache {
		c.tagTTL = 0
	}
	c.fillDefaults()
	var err error
	if c.mirrors, err = parseMirrors(o.Mirrors); err != nil {
		return nil, err
	}
	if c.insecure, err = parseHosts(o.Insecure); err != nil {
		return nil, err
	}
	if c.platform, err = parsePlatform(o.Platform); err != nil {
		return nil, err
	}
	return c, nil
}

func (o Options) checkNumbers() error {
	switch {
	case o.Jobs < 0:
		return fmt.Errorf("jobs must not be negative, got %d", o.Jobs)
	case o.RequestTimeout < 0:
		return fmt.Errorf("request timeout must not be negative, got %v", o.RequestTimeout)
	case o.Timeout < 0:
		return fmt.Errorf("timeout must not be negative, got %v", o.Timeout)
	case o.Retries > maxRetries:
		return fmt.Errorf("retries must be at most %d, got %d", maxRetries, o.Retries)
	case o.TagTTL < 0:
		return fmt.Errorf("tag TTL must not be negative, got %v", o.TagTTL)
	case o.TagTTL > 0 && o.CacheDir == "":
		return errors.New("tag TTL needs a cache directory")
	case o.DigestTTL < 0:
		return fmt.Errorf("digest TTL must not be negative, got %v", o.DigestTTL)
	case o.CacheDir != "" && len(o.CacheKey) < minCacheKey:
		return fmt.Errorf("a cache directory needs a signing key of at least %d bytes", minCacheKey)
	}
	return nil
}

func (c *config) fillDefaults() {
	if c.keychain == nil {
		c.keychain = authn.DefaultKeychain
	}
	if c.transport == nil {
		c.transport = defaultTransport()
	}
	if c.now == nil {
		c.now = time.Now
	}
}

// defaultTransport clones remote.DefaultTransport so that this Resolver's
// connection pool is its own.
func defaultTransport() http.RoundTripper {
	if t, ok := remote.DefaultTransport.(*http.Transport); ok {
		return t.Clone()
	}
	return remote.DefaultTransport
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// parseMirrors normalizes mirror keys to registry hosts as go-containerregistry
// spells them ("docker.io" → "index.docker.io") and checks each mirror.
func parseMirrors(in map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for from, to := range in {
		reg, err := parseHost(from)
		if err != nil {
			return nil, fmt.Errorf("mirror for %q: %w", from, err)
		}
		to = strings.TrimSuffix(to, "/")
		if strings.Contains(to, "://") {
			return nil, fmt.Errorf("mirror for %q: %q must be a host, not a URL", from, to)
		}
		if err := checkMirror(to); err != nil {
			return nil, fmt.Errorf("mirror for %q: %w", from, err)
		}
		out[reg] = to
	}
	return out, nil
}

// checkMirror makes sure a mirror parses with its first path element as the
// registry host: "mirror/library" would otherwise silently mean Docker Hub.
func checkMirror(to string) error {
	host, _, _ := strings.Cut(to, "/")
	repo, err := name.NewRepository(to + "/probe")
	if err != nil || repo.RegistryStr() != host {
		return fmt.Errorf("invalid mirror %q: want host[:port][/path], the host with a dot or a port, or localhost", to)
	}
	return nil
}

func parseHosts(hosts []string) (map[string]bool, error) {
	out := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		reg, err := parseHost(h)
		if err != nil {
			return nil, fmt.Errorf("insecure registry: %w", err)
		}
		out[reg] = true
	}
	return out, nil
}

func parseHost(h string) (string, error) {
	if h == "" || strings.ContainsAny(h, "/@") {
		return "", fmt.Errorf("%q is not a registry host", h)
	}
	reg, err := name.NewRegistry(h)
	if err != nil {
		return "", fmt.Errorf("%q is not a registry host", h)
	}
	return reg.RegistryStr(), nil
}

func parsePlatform(s string) (*v1.Platform, error) {
	if s == "" {
		return nil, nil
	}
	p, err := v1.ParsePlatform(s)
	if err != nil || p.OS == "" || p.Architecture == "" {
		return nil, fmt.Errorf("platform %q: want os/arch[/variant], e.g. linux/arm64", s)
	}
	return p, nil
}
