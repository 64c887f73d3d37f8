package images

import "context"

// Resolution is a registry's answer for one image reference.
//
// For a reference without a digest ("nginx:1.27", "nginx"), Digest is the
// digest the tag points to now. For a reference with a digest
// ("nginx@sha256:…", "nginx:1.27@sha256:…"), Digest equals that digest when
// the registry holds it. Err is set when no answer could be had (not found,
// unauthorized, registry down, timeout); Digest is then empty.
type Resolution struct {
	Digest string
	Err    error
}

// Resolver answers image references. Implementations resolve each unique
// reference once, concurrently, and must answer every reference they are
// given: a missing key in the returned map is treated as a failure.
type Resolver interface {
	Resolve(ctx context.Context, refs []string) map[string]Resolution
}
