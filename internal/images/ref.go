package images

import (
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Ref is a parsed image reference.
type Ref struct {
	// Original is the reference as written.
	Original string
	// Name is the repository with tag, without the digest: "nginx:1.27".
	Name string
	// Tag is the tag as written, or "" when none was written.
	Tag string
	// Digest is the digest as written, or "".
	Digest string
	// Registry is the registry host ("index.docker.io" for Docker Hub).
	Registry string
}

// Parse splits an image reference. It reports ok=false for references that
// are not valid image names.
func Parse(image string) (Ref, bool) {
	r := Ref{Original: image, Name: image}
	if i := strings.Index(image, "@"); i >= 0 {
		r.Name, r.Digest = image[:i], image[i+1:]
	}
	repo := r.Name
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, r.Tag = repo[:i], repo[i+1:]
	}
	parsed, err := name.NewRepository(repo)
	if err != nil {
		return r, false
	}
	r.Registry = parsed.RegistryStr()
	return r, true
}

// Repository is the repository as written, without tag or digest.
func (r Ref) Repository() string {
	if r.Tag == "" {
		return r.Name
	}
	return r.Name[:len(r.Name)-len(r.Tag)-1]
}

// HasDigest reports whether the reference carries a digest, well-formed or not.
func (r Ref) HasDigest() bool { return r.Digest != "" }

// ValidDigest reports whether the digest is a well-formed sha256 digest.
// (the same as the pattern ^sha256:[a-f0-9]{64}$, without a regular
// expression: it is asked of every pinned image of a render).
func (r Ref) ValidDigest() bool {
	hex, ok := strings.CutPrefix(r.Digest, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// WithDigest returns the reference pinned to a digest: "repo:tag@sha256:…",
// or "repo@sha256:…" when dropTag is set.
func (r Ref) WithDigest(digest string, dropTag bool) string {
	base := r.Name
	if dropTag && r.Tag != "" {
		base = strings.TrimSuffix(r.Name, ":"+r.Tag)
	}
	return base + "@" + digest
}

// NormalizeRegistry maps Docker Hub spellings to the host go-containerregistry
// uses, so allow-lists may say docker.io.
func NormalizeRegistry(host string) string {
	switch host {
	case "docker.io", "registry-1.docker.io", "index.docker.io":
		return name.DefaultRegistry
	}
	return host
}
