package argo

import (
	"slices"
	"testing"
)

func TestParseJQ(t *testing.T) {
	cases := []struct {
		expr string
		segs []string
		ok   bool
	}{
		{".", nil, true},
		{".spec.replicas", []string{"spec", "replicas"}, true},
		{".webhooks[]?.clientConfig.caBundle", []string{"webhooks", "*", "clientConfig", "caBundle"}, true},
		{".webhooks[0].clientConfig.caBundle", []string{"webhooks", "0", "clientConfig", "caBundle"}, true},
		{`.data["config.yaml"]`, []string{"data", "config.yaml"}, true},
		{`.metadata.annotations."autoscaling.alpha.kubernetes.io/behavior"`, []string{"metadata", "annotations", "autoscaling.alpha.kubernetes.io/behavior"}, true},
		{`.spec .template`, []string{"spec", "template"}, true},
		{`.spec.template.spec.initContainers[] | select(.name == "x")`, nil, false},
		{`.metadata.labels["a"`, nil, false},
		{`del(.spec)`, nil, false},
	}
	for _, c := range cases {
		p := parseJQ(c.expr)
		if p.ok != c.ok || (c.ok && !slices.Equal(p.segs, c.segs)) {
			t.Errorf("parseJQ(%q) = %v %v, want %v %v", c.expr, p.segs, p.ok, c.segs, c.ok)
		}
	}
	if p := parseJQ("..|.image?"); !p.whole() {
		t.Errorf("recursive descent must select everything")
	}
}

func TestParsePointer(t *testing.T) {
	for in, want := range map[string][]string{
		"":                           nil,
		"/":                          nil,
		"/spec/":                     {"spec"},
		"/metadata/annotations/a~1b": {"metadata", "annotations", "a/b"},
		"/x/~0y":                     {"x", "~y"},
	} {
		p := parsePointer(in)
		if !p.ok || !slices.Equal(p.segs, want) {
			t.Errorf("parsePointer(%q) = %v %v, want %v", in, p.segs, p.ok, want)
		}
	}
	if parsePointer("spec/replicas").ok {
		t.Error("a pointer must start with /")
	}
}

func TestAllowList(t *testing.T) {
	cases := []struct {
		path string
		jq   bool
		want bool
	}{
		{"/spec/replicas", false, true},
		{".spec.replicas", true, true},
		{"/spec/caBundle", false, true},
		{"/webhooks/0/clientConfig/caBundle", false, true},
		{".webhooks[]?.clientConfig.caBundle", true, true},
		{"/spec/conversion/webhook/clientConfig/caBundle", false, true},
		{"/spec/template/spec/replicas", false, false},
		{"/spec/replicas/x", false, false},
		{"/caBundleX", false, false},
		{".spec.replicas | tostring", true, false},
	}
	for _, c := range cases {
		p := parsePointer(c.path)
		if c.jq {
			p = parseJQ(c.path)
		}
		if got := p.allowed(DefaultIgnoreDifferencesAllowed); got != c.want {
			t.Errorf("%s allowed = %v, want %v", c.path, got, c.want)
		}
	}
	// A wildcard in the path is broader than a literal in the pattern.
	if parseJQ(".webhooks[].name").allowed([]string{"/webhooks/0/name"}) {
		t.Error(".webhooks[] must not match /webhooks/0")
	}
}
