package imagelock

import (
	"strings"
	"testing"
	"time"
)

var (
	dA = "sha256:" + strings.Repeat("a", 64)
	dB = "sha256:" + strings.Repeat("b", 64)
	dC = "sha256:" + strings.Repeat("c", 64)
)

const lockYAML = `apiVersion: kubectl-gate.dev/v1alpha1
kind: ImageLock
metadata:
  name: images
  namespace: shop
  labels: {app: shop}
  annotations: {config.kubernetes.io/local-config: "true"}
spec:
  images:
  - image: ghcr.io/shop/web:1.4.2
    digest: sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
    resolved: "2026-12-03T11:30:00Z"
  - image: nginx
    digest: sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
    platform: linux/arm64
    signer: {key: "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"}
    signatureBundle: sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd
`

func TestParse(t *testing.T) {
	l, err := Parse([]byte(lockYAML))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Spec.Images) != 2 || l.Spec.Images[1].Signer.Key == "" || l.Spec.Images[1].Platform != "linux/arm64" {
		t.Fatalf("parsed %+v", l.Spec.Images)
	}
	bad := []struct{ name, from, to, says string }{
		{"misspelt field", "digest: sha256:aaaa", "digset: sha256:aaaa", "unknown field"},
		{"short digest", strings.Repeat("a", 64), "abc", "is not sha256:<64 hex>"},
		{"digest in image", "ghcr.io/shop/web:1.4.2\n", "ghcr.io/shop/web:1.4.2@" + dA + "\n", "carries a digest"},
		{"bad image", "image: nginx", "image: UPPER/x", "not a valid image reference"},
		{"bad platform", "linux/arm64", "arm64", "not os/arch"},
		{"bad time", "2026-12-03T11:30:00Z", "yesterday", "not an RFC 3339 time"},
		{"other kind", "kind: ImageLock", "kind: Gate", "is not kubectl-gate.dev/v1alpha1 ImageLock"},
		{"two documents", "dddd\n", "dddd\n---\nkind: Other\n", "2 YAML documents"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(lockYAML, c.from, c.to, 1)
			if in == lockYAML {
				t.Fatal("the case changes nothing")
			}
			_, err := Parse([]byte(in))
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("Parse = %v, want an error saying %q", err, c.says)
			}
		})
	}
	// The same image for another platform is another entry.
	two := lockYAML + "  - image: nginx\n    digest: " + dC + "\n    platform: linux/amd64\n"
	if _, err := Parse([]byte(two)); err != nil {
		t.Errorf("one tag locked for two platforms: %v", err)
	}
	// A duplicate only after normalization is still a duplicate.
	dup := strings.Replace(lockYAML, "    platform: linux/arm64\n", "", 1) + "  - image: index.docker.io/library/nginx:latest\n    digest: " + dB + "\n"
	if _, err := Parse([]byte(dup)); err == nil || !strings.Contains(err.Error(), "locked already in spec.images[1]") {
		t.Errorf("nginx and index.docker.io/library/nginx:latest: %v", err)
	}
}

func TestMarshalIsSortedAndRoundTrips(t *testing.T) {
	l := New("images")
	l.Spec.Images = []Entry{{Image: "nginx:1.27", Digest: dB}, {Image: "ghcr.io/a/b:1", Digest: dA, Platform: "linux/arm64"}}
	out, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Index(s, "ghcr.io/a/b:1") > strings.Index(s, "nginx:1.27") || !strings.Contains(s, `config.kubernetes.io/local-config: "true"`) {
		t.Fatalf("not sorted or not local config:\n%s", s)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("written lock does not parse: %v\n%s", err, s)
	}
	if back.Spec.Images[0].Image != "ghcr.io/a/b:1" || back.Spec.Images[1].Digest != dB {
		t.Errorf("round trip: %+v", back.Spec.Images)
	}
}

func TestCheck(t *testing.T) {
	l := New("images")
	l.Spec.Images = []Entry{
		{Image: "ghcr.io/shop/web:1.4.2", Digest: dA},
		{Image: "ghcr.io/shop/web:1.5.0", Digest: dB},
		{Image: "nginx", Digest: dC},
		{Image: "ghcr.io/shop/old:1", Digest: dC},
	}
	cases := []struct {
		image    string
		ok       bool
		says     string
		proposed string
	}{
		{"ghcr.io/shop/web:1.4.2@" + dA, true, "", ""},
		{"ghcr.io/shop/web@" + dB, true, "", ""},        // digest only: held for the repository
		{"ghcr.io/shop/web:1.9@" + dA, true, "", ""},    // a tag the lock does not name, a digest it holds
		{"docker.io/library/nginx@" + dC, true, "", ""}, // another spelling
		{"ghcr.io/shop/web:1.4.2@" + dB, false, "the lock pins tag 1.4.2 to " + dA + ", the render to " + dB, "ghcr.io/shop/web:1.4.2@" + dA},
		{"ghcr.io/shop/web:1.4.2@" + dC, false, "the lock pins tag 1.4.2", "ghcr.io/shop/web:1.4.2@" + dA},
		{"ghcr.io/shop/web@" + dC, false, "digest " + dC + " is not in the lock", ""},
		{"ghcr.io/shop/api:1@" + dA, false, "is not in the lock: it holds no entry for ghcr.io/shop/api", ""},
		{"ghcr.io/shop/web:1.4.2", false, "has no digest; the lock pins it to " + dA, "ghcr.io/shop/web:1.4.2@" + dA},
		{"nginx:latest", false, "has no digest; the lock pins it", "nginx:latest@" + dC},
		{"ghcr.io/shop/api:1", false, "has no digest and the lock holds nothing", ""},
		{"UPPER/x:1", true, "", ""}, // image-digest reports it
	}
	for _, c := range cases {
		ix := NewIndex(Source{Name: "--lock gate.lock", Lock: l})
		p, ok := ix.Check(c.image)
		if ok != c.ok || !strings.Contains(p.Message, c.says) || p.Proposed != c.proposed {
			t.Errorf("Check(%q) = %+v, %v; want ok %v saying %q proposing %q", c.image, p, ok, c.ok, c.says, c.proposed)
		}
	}
	ix := NewIndex(Source{Name: "--lock gate.lock", Lock: l})
	ix.Check("ghcr.io/shop/web:1.4.2@" + dA)
	ix.Check("nginx:1.27@" + dC)
	unused := ix.Unused()
	if len(unused) != 2 || unused[0].Image != "ghcr.io/shop/web:1.5.0" || unused[1].Image != "ghcr.io/shop/old:1" || unused[1].Place != 3 {
		t.Errorf("unused = %+v", unused)
	}
}

func TestConflicts(t *testing.T) {
	a, b := New("a"), New("b")
	a.Spec.Images = []Entry{{Image: "nginx:1", Digest: dA}}
	b.Spec.Images = []Entry{{Image: "docker.io/library/nginx:1", Digest: dB}}
	if c := NewIndex(Source{"--lock a", a}, Source{"ImageLock b", b}).Conflicts(); len(c) != 1 || !strings.Contains(c[0], "--lock a locks nginx:1 to "+dA) {
		t.Errorf("conflicts = %q", c)
	}
	if c := NewIndex(Source{"--lock a", a}, Source{"ImageLock a", a}).Conflicts(); len(c) != 0 {
		t.Errorf("one lock twice: %q", c)
	}
}

func TestBuilderKeepsResolvedTimes(t *testing.T) {
	b := NewBuilder()
	for _, e := range []Entry{{Image: "nginx:1", Digest: dA}, {Image: "ghcr.io/a/b:2", Digest: dB}, {Image: "nginx:1", Digest: dA}} {
		if err := b.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Add(Entry{Image: "nginx:1", Digest: dC}); err == nil {
		t.Error("one tag pinned to two digests in one run was accepted")
	}
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	first := b.Lock("images", nil, t0)
	if len(first.Spec.Images) != 2 || first.Spec.Images[0].Resolved != "2026-12-01T08:00:00Z" {
		t.Fatalf("first lock: %+v", first.Spec.Images)
	}
	again := NewBuilder()
	_ = again.Add(Entry{Image: "nginx:1", Digest: dA})
	_ = again.Add(Entry{Image: "ghcr.io/a/b:2", Digest: dC}) // moved
	second := again.Lock("ignored", first, t0.Add(48*time.Hour))
	if second.Spec.Images[1].Resolved != "2026-12-01T08:00:00Z" || second.Spec.Images[0].Resolved != "2026-12-03T08:00:00Z" {
		t.Errorf("unchanged entry must keep its time, a moved one take the new: %+v", second.Spec.Images)
	}
	if second.Metadata["name"] != "images" {
		t.Errorf("the previous lock's metadata was not kept: %v", second.Metadata)
	}
}
