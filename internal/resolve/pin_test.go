package resolve

import "testing"

func TestPinned(t *testing.T) {
	t.Parallel()
	const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const old = "sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	cases := []struct {
		ref           string
		keep, dropped string
	}{
		{"nginx", "nginx@" + d, "nginx@" + d},
		{"nginx:1.27", "nginx:1.27@" + d, "nginx@" + d},
		{"nginx:latest", "nginx:latest@" + d, "nginx@" + d},
		{"nginx:1.27@" + old, "nginx:1.27@" + d, "nginx@" + d},
		{"nginx@" + old, "nginx@" + d, "nginx@" + d},
		{"docker.io/library/nginx:1.27", "docker.io/library/nginx:1.27@" + d, "docker.io/library/nginx@" + d},
		{"localhost:5000/team/app", "localhost:5000/team/app@" + d, "localhost:5000/team/app@" + d},
		{"localhost:5000/team/app:v2", "localhost:5000/team/app:v2@" + d, "localhost:5000/team/app@" + d},
	}
	for _, c := range cases {
		for drop, want := range map[bool]string{false: c.keep, true: c.dropped} {
			got, err := Pinned(c.ref, d, drop)
			if err != nil || got != want {
				t.Errorf("Pinned(%q, dropTag=%v) = %q, %v; want %q", c.ref, drop, got, err, want)
			}
		}
	}
}

func TestPinnedRejects(t *testing.T) {
	t.Parallel()
	const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, c := range []struct{ ref, digest string }{
		{"nginx:1.27", "sha256:abc"},
		{"nginx:1.27", ""},
		{"nginx:1.27", "latest"},
		{"Not A Ref", d},
		{"", d},
	} {
		if got, err := Pinned(c.ref, c.digest, false); err == nil {
			t.Errorf("Pinned(%q, %q) = %q, want an error", c.ref, c.digest, got)
		}
	}
}
