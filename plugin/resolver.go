package plugin

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/resolve"
)

// resolvers shares one resolver per distinct registry configuration across
// all units of a run, so each unique image is resolved once.
type resolvers struct {
	o  *options
	mu sync.Mutex
	m  map[string]*resolve.Resolver
}

func newResolvers(o *options) *resolvers {
	return &resolvers{o: o, m: map[string]*resolve.Resolver{}}
}

// For returns the resolver for a spec's registry settings.
func (rs *resolvers) For(s *config.Spec) (images.Resolver, error) {
	opts := resolve.Options{
		Jobs:       rs.o.jobs,
		Timeout:    rs.o.timeout,
		Mirrors:    s.Images.Mirrors,
		Insecure:   s.Images.InsecureRegistries,
		Platform:   s.Images.Platform,
		CacheDir:   rs.o.cacheDir,
		TagTTL:     rs.o.tagTTL,
		NoTagCache: s.Images.Digest == config.DigestVerify,
	}
	key := resolverKey(opts)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r, ok := rs.m[key]; ok {
		return r, nil
	}
	r, err := resolve.New(opts)
	if err != nil {
		return nil, usageErr("registry settings", "%v", err)
	}
	rs.m[key] = r
	return r, nil
}

func resolverKey(o resolve.Options) string {
	var mirrors []string
	for k, v := range o.Mirrors {
		mirrors = append(mirrors, k+"="+v)
	}
	sort.Strings(mirrors)
	insecure := append([]string(nil), o.Insecure...)
	sort.Strings(insecure)
	return fmt.Sprint(strings.Join(mirrors, ","), "|", strings.Join(insecure, ","), "|", o.Platform, "|", o.NoTagCache)
}
