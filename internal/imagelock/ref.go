package imagelock

import (
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// The image-reference split the image rules use (internal/images), here
// too so that config, which the images package imports, may import this
// package.

var digestRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

// ref is an image reference split as written.
type ref struct {
	name   string // without the digest: "nginx:1.27"
	tag    string // as written, "" when none
	digest string // as written, "" when none
	repo   string // normalized: "index.docker.io/library/nginx"
}

// parseRef splits an image reference; ok is false when it is not one.
func parseRef(image string) (ref, bool) {
	r := ref{name: image}
	if i := strings.Index(image, "@"); i >= 0 {
		r.name, r.digest = image[:i], image[i+1:]
	}
	repo := r.name
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, r.tag = repo[:i], repo[i+1:]
	}
	parsed, err := name.NewRepository(repo)
	if err != nil {
		return r, false
	}
	if r.tag != "" {
		if _, err := name.NewTag(repo + ":" + r.tag); err != nil {
			return r, false
		}
	}
	r.repo = parsed.Name()
	return r, true
}

func (r ref) validDigest() bool { return digestRE.MatchString(r.digest) }

// tagOrLatest is the tag a runtime pulls: "latest" when none is written.
func (r ref) tagOrLatest() string {
	if r.tag == "" {
		return name.DefaultTag
	}
	return r.tag
}

// withDigest is the reference pinned to digest, its tag kept.
func (r ref) withDigest(digest string) string { return r.name + "@" + digest }
