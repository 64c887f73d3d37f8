package argo

import (
	"slices"
	"strings"
	"testing"
)

// FuzzPaths feeds the ignoreDifferences JSON pointer and jq path readers
// arbitrary strings (seeds in testdata/fuzz/FuzzPaths): no panic, and a
// pointer the reader takes as a plain path of non-empty keys reads back to
// itself.
func FuzzPaths(f *testing.F) {
	for _, s := range []string{"", "/", "/spec/replicas", "/a~1b/~0c/", "spec", ".spec.replicas", ".webhooks[]?.clientConfig.caBundle",
		`.metadata.annotations["x/y"]`, ".a[0].b", "..|.image?", ".a | select(.b)", `."quoted".x`, "[", ".[", `.["`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []fieldPath{parsePointer(s), parseJQ(s)} {
			_ = p.whole()
			_ = p.allowed(DefaultIgnoreDifferencesAllowed)
		}
		p := parsePointer(s)
		if !p.ok || len(p.segs) == 0 || slices.Contains(p.segs, "") || strings.TrimSpace(pointer(p.segs)) != pointer(p.segs) {
			return // "/" is the root, a trailing "/" and outer spaces are dropped: those do not round-trip
		}
		again := parsePointer(pointer(p.segs))
		if !slices.Equal(again.segs, p.segs) {
			t.Fatalf("parsePointer(%q) = %q, written back and read again %q", s, p.segs, again.segs)
		}
	})
}

// pointer writes segments as a JSON pointer (RFC 6901).
func pointer(segs []string) string {
	out := ""
	for _, s := range segs {
		b := []byte{}
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '~':
				b = append(b, '~', '0')
			case '/':
				b = append(b, '~', '1')
			default:
				b = append(b, s[i])
			}
		}
		out += "/" + string(b)
	}
	return out
}
