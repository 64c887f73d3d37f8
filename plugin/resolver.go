package plugin

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/pullsecrets"
	"github.com/kubectl-gate/kubectl-gate/internal/resolve"
)

// resolvers shares one resolver per distinct registry configuration across
// all units of a run, so each unique image is resolved once.
type resolvers struct {
	o    *options
	pull *pullsecrets.Reader // nil without --pull-secrets-from
	mu   sync.Mutex
	m    map[string]*resolve.Resolver
}

func newResolvers(o *options) *resolvers {
	return &resolvers{o: o, pull: newPullSecrets(o), m: map[string]*resolve.Resolver{}}
}

// For returns the resolver for a spec's registry settings and, with
// --pull-secrets-from, the pull secrets of the render's workloads
// (resources).
func (rs *resolvers) For(ctx context.Context, s *config.Spec, resources []*yaml.RNode) (images.Resolver, error) {
	opts := resolve.FromSpec(s)
	opts.Jobs, opts.Timeout = rs.o.jobs, rs.o.timeout
	opts.CacheDir, opts.TagTTL = rs.o.cacheDir, rs.o.tagTTL
	if opts.CacheDir != "" {
		k, err := cacheKey()
		if err != nil {
			return nil, err
		}
		opts.CacheKey = k
	}
	key := resolverKey(opts)
	if rs.pull != nil {
		kc, id, err := rs.pull.Keychain(ctx, resources, images.ConfiguredPaths(s))
		if err != nil {
			return nil, err
		}
		opts.Keychain, key = kc, key+"|pull-secrets="+id
	}
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
