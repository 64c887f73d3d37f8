package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/resolve"
)

// resolvers shares one resolver per distinct registry configuration across
// all units of a run, so each unique image is resolved once.
type resolvers struct {
	o  RegistryOptions
	mu sync.Mutex
	m  map[string]*resolve.Resolver
}

func newResolvers(o RegistryOptions) *resolvers {
	return &resolvers{o: o, m: map[string]*resolve.Resolver{}}
}

// For returns the resolver for a spec's registry settings and, with
// RegistryOptions.PullSecrets, the pull secrets of the render's workloads
// (resources).
func (rs *resolvers) For(ctx context.Context, s *config.Spec, resources []*yaml.RNode) (images.Resolver, error) {
	opts := resolve.FromSpec(s)
	opts.Jobs, opts.Timeout = rs.o.Jobs, rs.o.Timeout
	opts.CacheDir, opts.TagTTL = rs.o.CacheDir, rs.o.TagTTL
	if opts.CacheDir != "" {
		if rs.o.CacheKey == nil {
			return nil, errors.New("caching registry answers: no signing key (RegistryOptions.CacheKey)")
		}
		k, err := rs.o.CacheKey()
		if err != nil {
			return nil, err
		}
		opts.CacheKey = k
	}
	key := resolverKey(opts)
	if rs.o.PullSecrets != nil {
		kc, id, err := rs.o.PullSecrets.Keychain(ctx, resources, images.ConfiguredPaths(s))
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
