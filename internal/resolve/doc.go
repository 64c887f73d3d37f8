// Package resolve turns image references into digests by asking their
// registries, through go-containerregistry.
//
// A [Resolver] answers many references at once, the way a deploy gate needs
// it: every unique reference is looked up once for the Resolver's lifetime
// (concurrent asks for the same reference share one look-up), at most
// [Options.Jobs] look-ups run at a time over one shared HTTP transport, and
// bearer tokens are fetched once per repository and reused.
//
// For a reference by tag ("nginx:1.27", "nginx") the answer is the digest the
// tag points to now: a HEAD request reads Docker-Content-Digest, and a GET
// (hashing the manifest) stands in when a registry leaves the header out. A
// multi-arch index resolves to the index digest unless [Options.Platform]
// names a platform, in which case the matching child manifest is pinned. For
// a reference by digest ("nginx@sha256:…", "nginx:1.27@sha256:…") the answer
// is that digest once a HEAD by digest shows the repository holds it.
//
// Failures are fail-closed and typed: every reference gets an answer, and a
// failed answer carries an [*Error] whose [ErrorKind] says whether the image
// was not found, access was refused, the registry was unavailable, time ran
// out, or the reference was malformed. Requests are retried with jittered
// exponential backoff on 408, 429, 5xx and connection resets, honouring
// Retry-After, and never past the overall deadline. Credentials seen on the
// wire are redacted from every error string.
//
// An optional on-disk cache ([Options.CacheDir]) keeps digest-existence
// answers for [Options.DigestTTL] and tag answers for [Options.TagTTL].
// Entries are signed with [Options.CacheKey] and checked on every read, so
// a tampered cache costs look-ups, never a wrong answer. Every manifest
// answer is checked before use: a Content-Type that is not a manifest's, a
// body that does not hash to the Docker-Content-Digest header or whose
// mediaType contradicts the header is an [Inconsistent] failure.
//
// Typical use:
//
//	r, err := resolve.New(resolve.Options{Jobs: 8, Platform: "linux/arm64"})
//	if err != nil { … }
//	answers := r.Resolve(ctx, []string{"nginx:1.27", "ghcr.io/org/app@sha256:…"})
//	pinned, err := resolve.Pinned("nginx:1.27", answers["nginx:1.27"].Digest, false)
//	// pinned == "nginx:1.27@sha256:…"
package resolve
