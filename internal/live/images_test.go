package live

import "testing"

func TestMatches(t *testing.T) {
	const a, b = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	cases := []struct {
		expected, running, runningDigest string
		want                             bool
	}{
		{"nginx:1.27@" + a, "nginx:1.27@" + a, "", true},
		{"nginx:1.27@" + a, "docker.io/library/nginx@" + a, "", true},            // same digest, other spelling
		{"nginx:1.27@" + a, "nginx:1.27", a, true},                               // digest from status imageID
		{"nginx:1.27@" + a, "nginx:1.27", b, false},                              // the tag moved
		{"nginx:1.27@" + a, "nginx:1.27", "", false},                             // a pinned digest must be proven
		{"nginx:1.27", "docker.io/library/nginx:1.27", a, true},                  // a tag is met at any digest
		{"nginx:1.27", "nginx:1.27@" + b, "", true},                              // ... also when the pod pins it
		{"nginx", "index.docker.io/library/nginx:latest", "", true},              // implicit latest
		{"nginx:1.27", "nginx:1.28", "", false},                                  // another tag
		{"registry.example/web:1.2", "registry.example:5000/web:1.2", "", false}, // another registry
	}
	for _, c := range cases {
		e := Expected{Ref: c.expected, Digest: digestOf(c.expected)}
		d := c.runningDigest
		if d == "" {
			d = digestOf(c.running)
		}
		if got := matches(e, Running{Ref: c.running, Digest: d}); got != c.want {
			t.Errorf("expected %s, running %s (digest %q): match = %v, want %v", c.expected, c.running, d, got, c.want)
		}
	}
}
