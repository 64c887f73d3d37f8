package resolve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// target is one normalized reference and the way to look it up.
type target struct {
	// key identifies the reference however it was spelled
	// ("nginx" and "index.docker.io/library/nginx:latest" share one).
	key string
	// lookup is what the registry is asked: mirror applied, plain HTTP
	// allowed when the host is listed as insecure.
	lookup name.Reference
	// digest is set for a reference by digest.
	digest string
	// cacheKey names the answer on disk; for tags it includes the platform.
	cacheKey string
}

func (t target) byDigest() bool { return t.digest != "" }

// parse turns a reference as written into a target.
func (r *Resolver) parse(raw string) (target, error) {
	ref, err := name.ParseReference(raw)
	if err != nil {
		return target{}, &invalidError{err: err}
	}
	repo, err := r.lookupRepo(ref.Context())
	if err != nil {
		return target{}, &invalidError{err: err}
	}
	if d, ok := ref.(name.Digest); ok {
		look := repo.Digest(d.DigestStr())
		return target{key: d.Context().Name() + "@" + d.DigestStr(), lookup: look, digest: d.DigestStr(), cacheKey: look.Name()}, nil
	}
	tag := ref.(name.Tag)
	look := repo.Tag(tag.TagStr())
	return target{key: tag.Name(), lookup: look, cacheKey: look.Name() + "|" + r.platformString()}, nil
}

// lookupRepo applies Options.Mirrors and Options.Insecure to a repository.
func (r *Resolver) lookupRepo(repo name.Repository) (name.Repository, error) {
	base := repo.RegistryStr()
	if m, ok := r.cfg.mirrors[base]; ok {
		base = m
	}
	full := base + "/" + repo.RepositoryStr()
	look, err := name.NewRepository(full)
	if err != nil || !r.cfg.insecure[look.RegistryStr()] {
		return look, err
	}
	return name.NewRepository(full, name.Insecure)
}

func (r *Resolver) platformString() string {
	if r.cfg.platform == nil {
		return ""
	}
	return r.cfg.platform.String()
}

// fetch asks the registry about one target. With Options.Platform a tag is
// read with GET, so that whether it names an index is judged from the body
// (whose digest the integrity check matched), never from a Content-Type
// header: a registry that labels an index as an image must not get the
// index pinned.
func (r *Resolver) fetch(ctx context.Context, t target) (string, error) {
	if r.cfg.platform != nil && !t.byDigest() {
		g, err := r.puller.Get(ctx, t.lookup)
		if err != nil {
			return "", err
		}
		return r.platformDigest(ctx, t.lookup, manifest{desc: g.Descriptor, body: g.Manifest})
	}
	m, err := r.describe(ctx, t.lookup)
	switch {
	case err != nil:
		return "", err
	case t.byDigest():
		return t.digest, nil // HEAD/GET by digest checked the digest matches
	}
	return m.desc.Digest.String(), nil
}

// platformDigest answers a tag's body for Options.Platform: the body's own
// digest for an image, the matching child for an index.
func (r *Resolver) platformDigest(ctx context.Context, ref name.Reference, m manifest) (string, error) {
	index, err := isIndexBody(m.body)
	if err != nil {
		return "", &inconsistentError{registry: ref.Context().RegistryStr(), msg: err.Error()}
	}
	if !index {
		return m.desc.Digest.String(), nil
	}
	return r.child(ctx, ref, m)
}

// manifest is what a HEAD (desc only) or GET (desc and body) told us.
type manifest struct {
	desc v1.Descriptor
	body []byte
}

// describe sends HEAD, and GET when the HEAD answer was unusable (most often:
// no Docker-Content-Digest header).
func (r *Resolver) describe(ctx context.Context, ref name.Reference) (manifest, error) {
	d, err := r.puller.Head(ctx, ref)
	if err == nil {
		return manifest{desc: *d}, nil
	}
	if !headFallback(err) {
		return manifest{}, err
	}
	g, err := r.puller.Get(ctx, ref)
	if err != nil {
		return manifest{}, err
	}
	return manifest{desc: g.Descriptor, body: g.Manifest}, nil
}

// headFallback reports whether a failed HEAD is worth a GET: the registry
// answered, but not usefully (a missing header, or a method it does not
// support). Network failures, timeouts and definite answers such as 401 or
// 404 are final, so failing references do not cost two requests.
func headFallback(err error) bool {
	var (
		ue *url.Error
		te *transport.Error
	)
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ue):
		return false
	case errors.As(err, &te):
		return te.StatusCode == http.StatusBadRequest || te.StatusCode == http.StatusMethodNotAllowed ||
			te.StatusCode == http.StatusNotImplemented
	}
	return true
}

// child picks the manifest for Options.Platform out of an index's body and
// reads it by digest to make sure it is an image, not another index.
func (r *Resolver) child(ctx context.Context, ref name.Reference, m manifest) (string, error) {
	idx, err := v1.ParseIndexManifest(bytes.NewReader(m.body))
	if err != nil {
		return "", fmt.Errorf("parsing index %s: %w", m.desc.Digest, err)
	}
	want := *r.cfg.platform
	for _, c := range idx.Manifests {
		if c.Platform == nil || !c.Platform.Satisfies(want) {
			continue
		}
		g, err := r.puller.Get(ctx, ref.Context().Digest(c.Digest.String()))
		if err != nil {
			return "", err
		}
		if nested, err := isIndexBody(g.Manifest); err != nil || nested {
			return "", &inconsistentError{registry: ref.Context().RegistryStr(),
				msg: fmt.Sprintf("the %s child %s of index %s is not an image manifest", want, c.Digest, m.desc.Digest)}
		}
		return c.Digest.String(), nil
	}
	return "", &notFoundError{msg: fmt.Sprintf("index %s has no manifest for platform %s", m.desc.Digest, want)}
}
