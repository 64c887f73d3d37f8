package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/imagelock"
	"github.com/kubectl-gate/kubectl-gate/internal/pullsecrets"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
	"github.com/kubectl-gate/kubectl-gate/internal/waiver"
)

// Inputs name what a run checks, as the user gave them.
type Inputs struct {
	// Kustomizations are kustomization directories (-k), rendered in
	// process, concurrently.
	Kustomizations []string
	// Files are rendered manifests: files, directories, or - for Stdin
	// (-f). Together they are one unit.
	Files []string
	// Recursive reads subdirectories of Files too; a nested kustomization
	// root is rendered as a unit of its own, not read raw (-R).
	Recursive bool
	// Stdin is read for the file "-".
	Stdin io.Reader
	// Charts are local Helm chart directories, rendered as `helm template`
	// with Options.Helm (--chart).
	Charts []string
	// AppsRoot is the checkout the renders' Argo CD Applications,
	// ApplicationSets and Flux objects deploy (--apps-root): their sources
	// are rendered from it as units of their own. Without it only a
	// self-managed Application (its source is its own -k directory) is
	// checked against its render.
	AppsRoot string
	// RepoURLs are the repoURLs of the checkout (--repo-url); default its
	// git remotes.
	RepoURLs []string
	// TargetBranch is the branch the checkout merges into
	// (--target-branch): sources tracking it render from the checkout.
	// Default: the trusted config's spec.argocd.targetBranch, else the
	// remote's default branch (revisions.go).
	TargetBranch string
	// CheckoutBranch, when set, is the branch the checkout stands for
	// whatever its HEAD: diff --base runs the base in a detached worktree
	// that stands for the head's branch.
	CheckoutBranch string
}

// Options say how a run renders and checks its inputs.
type Options struct {
	// Config is the trusted configuration (--config); nil means the
	// built-in defaults. A Gate or Pin inside a render may only tighten it
	// unless it says spec.allowInTreeLoosening (SECURITY.md).
	Config *config.Object
	// ConfigPath is the file Config was read from: relative spec.policies
	// are read from its directory, and Result.Configs names it.
	ConfigPath string
	// Flags applies the caller's overrides (the plugin's flags) to each
	// unit's spec after the in-tree config, and validates it; nil applies
	// none. It must not keep the spec.
	Flags func(*config.Spec) error
	// FlagsDecide says that Flags change the verdict: Result.Configs then
	// says "+ flags".
	FlagsDecide bool
	// Render are the kustomize render options.
	Render RenderOptions
	// Helm says how Charts and kustomize's helmCharts: render.
	Helm HelmOptions
	// Policy are the policy rule's sources beyond spec.policies.
	Policy PolicyOptions
	// Registry says how images are resolved, when pinning or verifying.
	Registry RegistryOptions
	// Pin resolves tags to digests and rewrites the renders in place
	// before the rules run; DropTag writes repo@sha256:… without the tag.
	Pin, DropTag bool
	// Lock, with Pin, collects what every image was pinned to, for the
	// caller to write as an ImageLock (pin --write-lock).
	Lock *imagelock.Builder
	// Version is stamped on the workloads the gate pinned.
	Version string
	// Progress, when set, is told how far rendering is ("rendered 3/7
	// kustomizations").
	Progress func(string)
	// Clock judges the expiry of Config's exceptions; nil is the system
	// clock.
	Clock waiver.Clock
	// Reuse, when set, takes the renders that cannot have changed from a
	// run at another revision (reuse.go: diff --base).
	Reuse *Reuse
	// ReleaseRenders checks each Application source that deploys no
	// Application or Flux object of its own as soon as it is rendered, and
	// then drops its render, keeping what its Applications' rules read
	// (argo.Summary): memory grows with the largest render, not with the
	// estate. So is each input holding no Argo CD or Flux object, checked
	// as soon as it is rendered or read (settle: memory grows with the
	// renders being made, not with the inputs), and, once checked, every
	// other unit whose render no other unit's rules read (no Application or
	// Flux object deploys it, it deploys none). The Units' Resources of
	// those are then nil. With Pin, each is kept as the bytes pin prints
	// (Unit.KeepYAML): Unit.WriteYAML and Stream print them. For check and
	// pin, not for a caller that reads the renders after the run (diff,
	// render, selftest). It is ignored with Reuse.
	ReleaseRenders bool
	// Precheck, when set, leaves unrendered the Application sources that
	// read nothing that differs from another revision (precheck.go: diff
	// --base).
	Precheck *PrecheckSide
	// UnmatchedExclusionsOK lets an --exclude-app name no app of the run
	// (diff's base: the pull request may add the app it excludes); else it
	// is a usage error (exclude.go).
	UnmatchedExclusionsOK bool
}

// RenderOptions are the kustomize render options.
type RenderOptions struct {
	// EnableAlphaPlugins runs KRM functions; EnableExec exec ones too.
	EnableAlphaPlugins, EnableExec bool
	// LoadRestrictorNone is kustomize's LoadRestrictionsNone.
	LoadRestrictorNone bool
	// NoRemote refuses kustomizations that name remote resources, before
	// fetching anything (spec.render.remote: deny).
	NoRemote bool
	// MaxInputBytes bounds a -f file or stdin; 0 is stream.DefaultMaxBytes.
	MaxInputBytes int64
	// Sort orders kustomize renders as `kustomize build` prints them
	// (render.Options.Sort), for a caller that prints the render.
	Sort bool
}

// RegistryOptions say how images are resolved.
type RegistryOptions struct {
	// Jobs bounds concurrent look-ups; Timeout bounds the run's look-ups.
	Jobs    int
	Timeout time.Duration
	// CacheDir caches answers, signed with the key CacheKey returns (asked
	// only when CacheDir is set); TagTTL is how long a tag's answer is
	// reused.
	CacheDir string
	CacheKey func() ([]byte, error)
	TagTTL   time.Duration
	// PullSecrets, when set, adds the credentials of the pull secrets the
	// render's workloads use in the cluster.
	PullSecrets *pullsecrets.Reader
}

// Result is what a run found: every unit, in the order planned (the
// inputs, then what each level of expansion added).
type Result struct {
	Units []*Unit
	// Configs say which configuration decided: one entry per
	// configuration, naming its units' inputs (after Check).
	Configs []finding.Config
	// FailOnWarning is set when a unit's configuration says failOn:
	// warning (after Check).
	FailOnWarning bool

	s     *session
	owned *argo.Ownership // what every unit's Applications render (ownership)
	names *argo.AppNames  // the Applications every unit holds (appNames)
}

// appNames indexes, once every unit is planned and before any is checked
// (a unit with no Applications of its own to compare drops its trees once
// checked), the Argo CD Applications each unit holds: written in its input
// or render, or generated by its ApplicationSet (render-duplicate across
// units). A unit checked as soon as it rendered holds none.
func (r *Result) appNames() {
	holders := make([]argo.AppHolder, len(r.Units))
	for i, u := range r.Units {
		u.seq = i
		h := &holders[i]
		for _, obj := range u.Resources {
			if argo.IsApplication(obj) {
				h.Apps = append(h.Apps, obj)
			}
		}
		switch src := u.Source.(type) {
		case *ApplicationSet:
			h.Set, h.Elements = src.Name, src.elements
		case *Files:
		default:
			h.By = u.Input()
		}
	}
	r.names = argo.NewAppNames(holders)
}

// ownership indexes, once, the objects the Applications and Flux objects
// of every unit render, for app-shared-object across units: identities and
// content hashes of the objects two owners render, never the renders.
func (r *Result) ownership() *argo.Ownership {
	if r.owned == nil {
		apps := make([][]argo.AppSource, len(r.Units))
		for i, u := range r.Units {
			u.seq, apps[i] = i, u.apps
		}
		r.owned = argo.NewOwnership(apps)
	}
	return r.owned
}

// session is what the units of one run share.
type session struct {
	in        Inputs
	o         Options
	resolvers *resolvers
	signers   signers // signature checks (signatures.go)
	progress  func(string)
	waivers   *waiver.Set // the trusted config's exceptions (waive.go)
	revs      *revisions  // the revisions sources name (revisions.go)
}

// Run plans, renders, expands and checks: Plan, then Result.Check. An
// error is a usage error (an input of the wrong shape, --apps-root not a
// directory): nothing was checked. A unit that could not be rendered or
// checked keeps its error, and the others are checked.
func Run(ctx context.Context, in Inputs, o Options) (*Result, error) {
	res, err := Plan(ctx, in, o)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	res.Check(ctx)
	return res, nil
}

// Plan renders the inputs and expands what the renders hold into more
// units, without checking them but for those Options.ReleaseRenders
// checks as soon as they are rendered. Call Result.Close when done with the
// sources (the worktrees of other revisions).
func Plan(ctx context.Context, in Inputs, o Options) (*Result, error) {
	in.Kustomizations, in.Files = distinct(in.Kustomizations), distinct(in.Files)
	s := &session{in: in, o: o, resolvers: newResolvers(o.Registry), progress: o.Progress, waivers: newWaivers(o)}
	if in.AppsRoot != "" {
		target := in.TargetBranch
		if target == "" && o.Config != nil {
			// Only the trusted config names it: an in-tree Gate, which the
			// pull request controls, could otherwise declare any branch
			// the checkout.
			target = o.Config.Spec.ArgoCD.TargetBranch
		}
		s.revs = &revisions{root: in.AppsRoot, target: target, branch: in.CheckoutBranch}
	}
	if s.progress == nil {
		s.progress = func(string) {}
	}
	res := &Result{s: s}
	loaded := s.load(ctx, res)
	for _, u := range loaded {
		// An input of the wrong shape (-f on a kustomization) is a usage
		// error before anything is reported, as a bad flag is.
		var ue *config.UsageError
		if u.Err != nil && errors.As(u.Err, &ue) {
			return nil, u.Err
		}
	}
	units, err := s.expand(ctx, loaded, res)
	if err == nil {
		err = s.checkExclusions(units)
	}
	if err != nil {
		_ = s.revs.close()
		return nil, err
	}
	res.Units = units
	return res, nil
}

// Close removes the temporary worktrees of other revisions the sources
// were rendered from (Run closes its Result itself). A run under
// internal/stop removes them on a signal or the deadline too.
func (r *Result) Close() error { return r.s.revs.close() }

// Check checks every unit not checked before, filling its Report (or Err)
// and Config, and the Result's Configs and FailOnWarning.
func (r *Result) Check(ctx context.Context) {
	configs := &configSources{}
	r.appNames()
	for i, u := range r.Units {
		if u.Report == nil && u.Err == nil {
			r.s.progress(fmt.Sprintf("checking %d/%d: %s", i+1, len(r.Units), u.Source.name()))
			r.checkUnit(ctx, u)
			if r.drops(u) {
				u.drop(r.s.o.Pin)
			}
		}
		if u.Err == nil {
			src := r.s.configSource(u)
			u.Config = finding.Config{Sources: src}.String()
			configs.add(u.Input(), src)
		}
	}
	r.s.progress("")
	r.Configs = configs.list()
}

// drops reports whether a unit, once checked, has its trees dropped
// (Options.ReleaseRenders; pin keeps the bytes it prints): no other unit's
// check reads them. A unit with Applications or Flux objects keeps them
// (the run's ownership index may be built later from them), and so does
// one they deploy (the deploying unit's rules read its render).
func (r *Result) drops(u *Unit) bool {
	o := r.s.o
	return o.ReleaseRenders && o.Reuse == nil && o.Precheck == nil && u.Err == nil && !u.linked && len(u.apps) == 0
}

// checkUnit checks one unit, filling its Report or Err.
func (r *Result) checkUnit(ctx context.Context, u *Unit) {
	end := stop.Doing(ctx, "checking "+u.Source.name())
	u.Report, u.Err = r.s.check(ctx, u, r)
	end()
}

// Report is every unit's findings and, for a unit with no verdict, its
// error as a failure, then the audit of the trusted config's exceptions
// (expired, unused): the run's report (after Check).
func (r *Result) Report() *finding.Report {
	total := &finding.Report{}
	for _, u := range r.Units {
		if u.Err != nil {
			total.Failures = append(total.Failures, u.Err.Error())
			continue
		}
		total.Merge(u.Report)
	}
	total.Findings = append(total.Findings, r.s.waivers.Audit()...)
	total.Configs = r.Configs
	return total
}

// renderOptions are the kustomize render options of the run.
func (s *session) renderOptions() render.Options {
	return render.Options{
		EnableAlphaPlugins: s.o.Render.EnableAlphaPlugins,
		EnableExec:         s.o.Render.EnableExec,
		LoadRestrictorNone: s.o.Render.LoadRestrictorNone,
		HelmRepoCache:      s.o.Helm.RepoCache,
		NoRemote:           s.o.Render.NoRemote,
		MaxFileBytes:       s.o.Render.MaxInputBytes,
		Sort:               s.o.Render.Sort,
		KubeVersion:        s.helmKubeVersion(),
	}
}

// configSources groups inputs by the configuration that decided them.
type configSources struct {
	order   []string
	configs map[string]*finding.Config
}

func (c *configSources) add(input string, src []finding.ConfigSource) {
	if c.configs == nil {
		c.configs = map[string]*finding.Config{}
	}
	desc := finding.Config{Sources: src}.String()
	cfg, ok := c.configs[desc]
	if !ok {
		c.order = append(c.order, desc)
		cfg = &finding.Config{Sources: src}
		c.configs[desc] = cfg
	}
	cfg.Inputs = append(cfg.Inputs, input)
}

// list is one entry per configuration, in the order first seen.
func (c *configSources) list() []finding.Config {
	out := make([]finding.Config, 0, len(c.order))
	for _, desc := range c.order {
		out = append(out, *c.configs[desc])
	}
	return out
}

// distinct returns paths without those naming the same file or directory
// as one before them (`-k ./a -k a/`, an absolute path, a symlink to it;
// "-" once), in order, each kept as first written: an input given twice
// was rendered and reported twice, every finding doubled.
func distinct(paths []string) []string {
	if len(paths) < 2 {
		return paths
	}
	seen := make(map[string]bool, len(paths))
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		key := p
		if p != "-" {
			if abs, err := filepath.Abs(p); err == nil {
				key = abs // cleaned
			}
			if real, err := filepath.EvalSymlinks(key); err == nil {
				key = real
			}
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return out
}
