package gate

import (
	"context"
	"errors"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/images"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/rules/all"
	"github.com/kubectl-gate/kubectl-gate/internal/waiver"
)

// Deps are the gate's outside parts, passed in.
type Deps struct {
	// Resolver answers registry look-ups; required for pinning and for
	// images.digest: verify.
	Resolver images.Resolver
	// Version is stamped on workloads the Pin step pinned.
	Version string
	// Policy evaluates the configured policies (rule policy); nil when
	// none are configured.
	Policy PolicyChecker
	// Signatures checks image signatures; required when
	// spec.images.signatures names a signer and the gate pins or verifies.
	Signatures images.SignatureVerifier
}

// PolicyChecker evaluates policies on the render and returns the policy
// rule's findings. An error means no verdict (or, as a *config.UsageError
// or the checker's own usage error type, a bad policy file).
type PolicyChecker interface {
	Check(ctx context.Context, resources []*yaml.RNode) ([]finding.Finding, error)
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
	Placement []finding.Finding
	// Apps holds the renders of Argo CD Applications' local sources.
	Apps []argo.AppSource
	// Shared indexes what the Applications of every unit of the run render,
	// Unit is this render's index in it (app-shared-object across units);
	// nil compares Apps alone.
	Shared *argo.Ownership
	Unit   int
	// AppNames indexes the Applications every unit of the run holds, by
	// Unit (render-duplicate across units); nil: this render alone.
	AppNames *argo.AppNames
	// CRDs are CustomResourceDefinitions from outside the render (--crd).
	CRDs []*yaml.RNode
	// Waivers are the run's exceptions (the trusted config's), shared by
	// every unit of a run and audited by the caller once all are checked
	// (waiver.Set.Audit); nil waives nothing.
	Waivers *waiver.Set
	// Owners are the Argo CD Applications / Flux objects (namespace/name)
	// whose render resources is, for an exception's match.app.
	Owners []string
	// InTree is the Gate/Pin found inside the render, if any: its
	// exceptions are ignored, with a warning.
	InTree *config.Object
}

// ErrNoResolver is returned when pinning or verify is asked without a Resolver.
var ErrNoResolver = errors.New("registry look-ups are needed (pin or images.digest: verify) but no resolver was given")

// ErrNoSignatureVerifier is returned when signers are configured and the
// gate pins or verifies without a SignatureVerifier.
var ErrNoSignatureVerifier = errors.New("spec.images.signatures names signers but no signature verifier was given")

// digestRefs lists, once each, the image references of resources that
// carry a valid digest: what the signature check is asked about (after
// pinning, every image that resolved).
func digestRefs(resources []*yaml.RNode, cfg *config.Spec) []string {
	var out []string
	seen := map[string]bool{}
	for _, im := range images.Collect(resources, images.ConfiguredPaths(cfg), manifest.IsLocalConfig) {
		if !im.Valid || !im.Ref.ValidDigest() || seen[im.Container.Image] {
			continue
		}
		seen[im.Container.Image] = true
		out = append(out, im.Container.Image)
	}
	return out
}

// Run checks resources and, with Options.Pin, pins them first.
func Run(ctx context.Context, resources []*yaml.RNode, opts Options, deps Deps) (*finding.Report, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = config.Default()
	}
	c := &rules.Context{
		Resources: resources,
		Config:    cfg,
		Counted:   manifest.Count(resources),
		Placement: opts.Placement,
		Pinning:   opts.Pin,
		Apps:      opts.Apps,
		Shared:    opts.Shared,
		Unit:      opts.Unit,
		AppNames:  opts.AppNames,
		CRDs:      opts.CRDs,
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
	if cfg.Images.Signatures.Enabled() && (opts.Pin || cfg.Images.Digest == config.DigestVerify) && cfg.Rules["image-signature"] != finding.Off {
		if deps.Signatures == nil {
			return nil, ErrNoSignatureVerifier
		}
		c.Signatures = deps.Signatures.VerifySignatures(ctx, digestRefs(resources, cfg))
	}
	if deps.Policy != nil && cfg.Rules["policy"] != finding.Off {
		fs, err := deps.Policy.Check(ctx, resources)
		if err != nil {
			return nil, err
		}
		c.Policy = fs
	}
	return finish(c, opts, nil), nil
}

// finish runs the rules on the render c holds (those of done already
// judged, rules.RunWith), applies the run's exceptions and places each
// finding in its source.
func finish(c *rules.Context, opts Options, done map[string][]finding.Finding) *finding.Report {
	fs := rules.RunWith(c, all.Rules(), done)
	if opts.Waivers != nil {
		fs = opts.Waivers.Apply(fs, waiver.Scope{Config: c.Config, Resources: c.Resources, Owners: opts.Owners, Fixed: Unwaivable, InTree: opts.InTree})
	}
	placeInSource(fs, c.Resources)
	return &finding.Report{Findings: fs, Resources: c.Counted, RulesRun: rules.Ran(c.Config, all.Rules())}
}

// Unwaivable reports whether a rule can never be waived nor baselined: its
// findings are no verdict, or it is marked Unwaivable (render-empty,
// gate-placement, the not-rendered and exception rules).
func Unwaivable(id string) bool {
	r, ok := all.Lookup(id)
	return !ok || r.NoVerdict || r.Unwaivable
}

// placeInSource gives a finding about an object that names no file (schema,
// policy) the object's source file, so every report can point at it (SARIF
// needs a location for each result).
func placeInSource(fs []finding.Finding, resources []*yaml.RNode) {
	var ix *manifest.Index
	for i := range fs {
		f := &fs[i]
		if f.File != nil || f.ResourceRef == nil || f.ResourceRef.Kind == "" {
			continue
		}
		if ix == nil {
			ix = manifest.NewIndex(resources)
		}
		if obj := ix.Get(f.ResourceRef.Kind, f.ResourceRef.Namespace, f.ResourceRef.Name); obj != nil {
			path := ""
			if f.Field != nil {
				path = f.Field.Path
			}
			f.File = manifest.SourceFileAt(obj, path)
		}
	}
}
