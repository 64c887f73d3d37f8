package resolve

import (
	"strings"
	"testing"
	"time"
)

func TestOptionsValidation(t *testing.T) {
	t.Parallel()
	bad := []struct {
		name string
		opts Options
		want string
	}{
		{"negative jobs", Options{Jobs: -1}, "jobs"},
		{"negative timeout", Options{Timeout: -time.Second}, "timeout"},
		{"negative request timeout", Options{RequestTimeout: -time.Second}, "request timeout"},
		{"too many retries", Options{Retries: 11}, "retries"},
		{"TTL without cache", Options{TagTTL: time.Hour}, "cache directory"},
		{"negative TTL", Options{TagTTL: -time.Hour, CacheDir: t.TempDir()}, "TTL"},
		{"bad platform", Options{Platform: "arm64"}, "platform"},
		{"mirror key with path", Options{Mirrors: map[string]string{"docker.io/library": "m.local:5000"}}, "mirror"},
		{"mirror as URL", Options{Mirrors: map[string]string{"docker.io": "https://m.local"}}, "not a URL"},
		{"mirror without a host", Options{Mirrors: map[string]string{"docker.io": "mirror/library"}}, "invalid mirror"},
		{"insecure with path", Options{Insecure: []string{"host:5000/x"}}, "insecure"},
		{"unusable cache dir", Options{CacheDir: "/dev/null/cache"}, "cache directory"},
	}
	for _, c := range bad {
		if _, err := New(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	r, err := New(Options{Retries: -1, Mirrors: map[string]string{"docker.io": "mirror.local:5000/hub"}, Insecure: []string{"docker.io"}})
	if err != nil {
		t.Fatal(err)
	}
	c := r.cfg
	if c.jobs != DefaultJobs || c.timeout != DefaultTimeout || c.requestTimeout != DefaultRequestTimeout || c.retries != 0 {
		t.Errorf("defaults not applied: %+v", c)
	}
	if c.mirrors["index.docker.io"] != "mirror.local:5000/hub" || !c.insecure["index.docker.io"] {
		t.Errorf("docker.io not normalized: mirrors %v insecure %v", c.mirrors, c.insecure)
	}
	if c.keychain == nil || c.transport == nil || c.now == nil {
		t.Errorf("nil defaults: %+v", c)
	}
}
