package resolve

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Pinned returns ref pinned to digest, keeping the reference's own spelling
// of the repository ("nginx" stays "nginx"):
//
//	Pinned("nginx:1.27", d, false)           == "nginx:1.27@" + d
//	Pinned("nginx:1.27", d, true)            == "nginx@" + d
//	Pinned("nginx", d, false)                == "nginx@" + d   (no "latest" invented)
//	Pinned("nginx:1.27@sha256:old", d, false) == "nginx:1.27@" + d
//
// The tag is kept for humans unless dropTag is set; the digest is what
// the runtime pulls.
func Pinned(ref, digest string, dropTag bool) (string, error) {
	if _, err := name.ParseReference(ref); err != nil {
		return "", fmt.Errorf("pinning %q: %w", ref, err)
	}
	base, _, _ := strings.Cut(ref, "@")
	if dropTag {
		base = withoutTag(base)
	}
	out := base + "@" + digest
	if _, err := name.NewDigest(out); err != nil {
		return "", fmt.Errorf("pinning %q: invalid digest %q", ref, digest)
	}
	return out, nil
}

// withoutTag strips a ":tag" suffix; a colon before the last slash belongs
// to a registry port ("host:5000/app").
func withoutTag(base string) string {
	slash := strings.LastIndex(base, "/")
	if colon := strings.LastIndex(base, ":"); colon > slash {
		return base[:colon]
	}
	return base
}
