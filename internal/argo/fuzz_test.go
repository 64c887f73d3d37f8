package argo

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/itchyny/gojq"
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

// FuzzJudgeJQ feeds the jqPathExpression evaluator arbitrary expressions
// (seeds in testdata/fuzz/FuzzJudgeJQ): a pull request writes them. No
// panic, an answer within the budget's time, a parse error exactly when
// Argo CD's gojq.Parse("del(" + expr + ")") fails (or its compile does),
// and never both "hides"
// and "cannot decide".
func FuzzJudgeJQ(f *testing.F) {
	for _, s := range []string{".spec", "(.spec)", ".status, .metadata", ".spec | .template", `getpath(["spec"])`, `.["sp" + "ec"]`,
		".webhooks[]?.clientConfig.caBundle", `.spec.template.spec.initContainers[] | select(.name == "istio-init")`, ".a) | del(.spec",
		".x), (.y", "until(false; .)", "[.[]", `select(.kind | (. + .) | (. + .) | length > 0)`, "..", ".spec[]", "def f: f; f"} {
		f.Add(s)
	}
	entry := ignoreEntry{kind: "Deployment", name: "web", group: "apps"}
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		v := judgeJQ(s, entry)
		if took := time.Since(start); took > 2*jqTimeout {
			t.Fatalf("judgeJQ(%q) took %v", s, took)
		}
		if v.hides != "" && v.undecided != "" {
			t.Fatalf("judgeJQ(%q) hides %q and cannot decide (%s)", s, v.hides, v.undecided)
		}
		if len(s) > jqMaxLen {
			return
		}
		_, err := gojq.Parse("del(" + s + ")")
		if err != nil && v.parseErr == nil {
			t.Fatalf("judgeJQ(%q): parse error %v, gojq says %v", s, v.parseErr, err)
		}
	})
}
