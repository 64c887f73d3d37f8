package gate

import (
	"context"
	"errors"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// Deps are the gate's outside parts, passed in.
type Deps struct {
	// Resolver answers registry look-ups; required for pinning and for
	// images.digest: verify.
	Resolver images.Resolver
	// Version is stamped on workloads the Pin step pinned.
	Version string
}

// Options say what to run.
type Options struct {
	// Config is the defaulted, validated spec; nil means config.Default().
	Config *config.Spec
	// Pin resolves tags to digests and rewrites the resources in place
	// before the rules run.
	Pin bool
	// DropTag writes repo@sha256:… instead of repo:tag@sha256:….
	DropTag bool
	// Placement holds gate-placement findings from the renderer.
	Placement []rules.Finding
	// RequirePinnedBy enables the image-pinned-by rule.
	RequirePinnedBy bool
	// Apps holds the renders of Argo CD Applications' local sources.
	Apps []rules.AppSource
}

// ErrNoResolver is returned when pinning or verify is asked without a Resolver.
var ErrNoResolver = errors.New("registry look-ups are needed (pin or images.digest: verify) but no resolver was given")

// Run checks resources and, with Options.Pin, pins them first.
func Run(ctx context.Context, resources []*yaml.RNode, opts Options, deps Deps) (*Report, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = config.Default()
	}
	c := &rules.Context{
		Resources:       resources,
		Config:          cfg,
		Counted:         Count(resources),
		Placement:       opts.Placement,
		Pinning:         opts.Pin,
		RequirePinnedBy: opts.RequirePinnedBy,
		Apps:            opts.Apps,
	}
	if opts.Pin || cfg.Images.Digest == config.DigestVerify {
		if deps.Resolver == nil {
			return nil, ErrNoResolver
		}
		c.Resolutions = deps.Resolver.Resolve(ctx, lookups(resources, cfg, opts.Pin))
	}
	if opts.Pin {
		if err := pin(resources, cfg, c.Resolutions, opts.DropTag, deps.Version); err != nil {
			return nil, err
		}
	}
	return &Report{Findings: runRules(c), Resources: c.Counted}, nil
}

// Count returns how many resources count as rendered: local-config objects
// and the gate's own config do not.
func Count(resources []*yaml.RNode) int {
	n := 0
	for _, r := range resources {
		if !rules.IsLocalConfig(r) {
			n++
		}
	}
	return n
}

// runRules runs every enabled rule and applies configured severities.
func runRules(c *rules.Context) []rules.Finding {
	var out []rules.Finding
	for _, r := range rules.All() {
		if r.Check == nil {
			continue
		}
		sev := c.Config.Rules[r.ID]
		if sev == "off" {
			continue
		}
		for _, f := range r.Check(c) {
			if sev != "" {
				f.Severity = rules.Severity(sev)
			}
			f.Rule = r.ID
			out = append(out, f)
		}
	}
	return out
}
