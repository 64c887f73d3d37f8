package images

import (
	"regexp"
	"strings"
	"testing"
)

// digestPattern is what ValidDigest accepts, as a regular expression.
var digestPattern = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

// FuzzRef feeds image reference parsing and rewriting arbitrary strings
// (seeds in testdata/fuzz/FuzzRef): no panic; an accepted reference splits
// back into what was written, and pinning it to a digest gives a reference
// that parses to the same repository with exactly that digest.
func FuzzRef(f *testing.F) {
	for _, s := range []string{"nginx", "nginx:1.27", "docker.io/library/nginx:latest", "host:5000/a/b:t@sha256:" + strings.Repeat("a", 64),
		"@sha256:", ":", "a@b@c", "UPPER/x", "[::1]:5000/x:y", "localhost/x:", "a/b/c/d:e"} {
		f.Add(s, false)
	}
	digest := "sha256:" + strings.Repeat("0f", 32)
	f.Fuzz(func(t *testing.T, image string, dropTag bool) {
		r, ok := Parse(image)
		if c, cok := parseCached(image); c != r || cok != ok {
			t.Fatalf("parseCached(%q) = %+v, %v; Parse gives %+v, %v", image, c, cok, r, ok)
		}
		if got, want := (Ref{Digest: image}).ValidDigest(), digestPattern.MatchString(image); got != want {
			t.Fatalf("ValidDigest of %q: %v, the pattern says %v", image, got, want)
		}
		if !ok {
			return
		}
		if r.Digest != "" && r.Name+"@"+r.Digest != image {
			t.Fatalf("Parse(%q): name %q + digest %q is not the input", image, r.Name, r.Digest)
		}
		if r.Tag != "" && r.Repository()+":"+r.Tag != r.Name {
			t.Fatalf("Parse(%q): repository %q + tag %q is not %q", image, r.Repository(), r.Tag, r.Name)
		}
		pinned := r.WithDigest(digest, dropTag)
		p, ok := Parse(pinned)
		if !ok || p.Digest != digest || !p.ValidDigest() || p.Repository() != r.Repository() {
			t.Fatalf("WithDigest(%q) = %q parses to %+v (ok %v)", image, pinned, p, ok)
		}
	})
}
