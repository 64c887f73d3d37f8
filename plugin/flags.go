package plugin

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// options are the flags shared by check, pin and selftest.
type options struct {
	kustomizations     []string
	files              []string
	recursive          bool
	configFile         string
	output             string
	failOn             string
	expectResources    int
	enableAlphaPlugins bool
	enableExec         bool
	loadRestrictor     string
	noRemote           bool
	requirePinnedBy    bool
	appsRoot           string
	repoURLs           []string
	targetBranch       string
	checkoutBranch     string // diff: the branch the base worktree stands for
	ruleOverrides      []string
	excludeApps        []string
	imageFields        []string
	digest             string
	maxInputBytes      int64
	quiet, verbose     bool
	noColor            bool

	// registry look-ups
	insecureRegistries []string
	platform           string
	jobs               int
	timeout            time.Duration
	cacheDir           string
	tagTTL             time.Duration
	pullSecretsFrom    string // kubeconfig context: registry credentials from its pull secrets (pullsecrets.go)
	kubeconfig         string

	// schema
	kubernetesVersion string
	crds              []string
	policy            pipeline.PolicyOptions // policy.go
	// policiesFromRender is --policies-from-render (spec.policiesFromRender)
	policiesFromRender bool
	charts             []string // helm.go
	helm               pipeline.HelmOptions
	// ignoreMissingSchema twins spec.schema.ignoreMissing.
	ignoreMissingSchema []string

	// baseline (waive.go)
	baseline      string
	writeBaseline string

	// image lock (imagelock.go)
	locks lockOptions
	// signers (signatures.go)
	signatures signatureOptions

	// pin
	dropTag            bool
	writeKustomization string
}

func newFlagSet(name string, o *options, pin bool) *pflag.FlagSet {
	fs := pflag.NewFlagSet("kubectl gate "+name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.StringArrayVarP(&o.kustomizations, "kustomize", "k", nil, "render this kustomization directory in process (repeatable; checked concurrently)")
	fs.StringArrayVarP(&o.files, "filename", "f", nil, "read rendered manifests from a file, a directory or - for stdin (repeatable)")
	fs.BoolVarP(&o.recursive, "recursive", "R", false, "with -f DIR, read subdirectories too")
	fs.Int64Var(&o.maxInputBytes, "max-input-bytes", stream.DefaultMaxBytes, "refuse a -f file or stdin larger than this (no verdict)")
	fs.StringVar(&o.configFile, "config", "", "a Gate or Pin object (the KRM function's functionConfig)")
	fs.StringVarP(&o.output, "output", "o", "text", "output format: "+strings.Join(report.Formats, "|"))
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "text output: only error findings, what had no verdict and the verdict line; no progress or warnings (kustomize's too) on stderr")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "text output: list every entry of long lists; stderr: each stage with its timing")
	fs.BoolVar(&o.noColor, "no-color", false, "no color in text output (also when NO_COLOR is set)")
	fs.StringVar(&o.failOn, "fail-on", "error", "lowest severity that fails the gate: error|warning")
	fs.IntVar(&o.expectResources, "expect-resources", -1, "the render must hold exactly N objects (render-count)")
	fs.StringArrayVar(&o.ruleOverrides, "rule", nil, "override a rule's severity: ID=error|warning|off (repeatable)")
	fs.StringArrayVar(&o.excludeApps, "exclude-app", nil, "take an Argo CD Application or ApplicationSet (NAME or NAMESPACE/NAME) whose source the gate cannot render out of scope; reported as excluded (repeatable)")
	fs.StringVar(&o.digest, "digest", "", "image digest mode: require|verify|off (default from config: require)")
	fs.StringVar(&o.kubernetesVersion, "kubernetes-version", "", "validate schemas for this Kubernetes minor, e.g. 1.35 (default: the newest embedded)")
	fs.StringArrayVar(&o.ignoreMissingSchema, "ignore-missing-schema", nil, "allow a kind with no schema unvalidated: `GROUP/KIND` (KIND for the core group; a glob in GROUP or KIND, e.g. '*.istio.io/*'), as schema.ignoreMissing (repeatable)")
	fs.StringArrayVar(&o.crds, "crd", nil, "CustomResourceDefinitions for schema validation from a FILE or DIR (repeatable)")
	fs.StringArrayVar(&o.imageFields, "image-field", nil, "also read the image reference in this string field of KIND, `KIND:PATH` (e.g. Engine:spec.runners[].imageRef; = spec.images.fields; repeatable)")
	fs.BoolVar(&o.requirePinnedBy, "require-pinned-by", false, "fail workloads the Pin transformer did not stamp (proves the KRM step ran)")
	fs.BoolVar(&o.enableAlphaPlugins, "enable-alpha-plugins", false, "run KRM functions during the render, as kustomize does")
	fs.BoolVar(&o.enableExec, "enable-exec", false, "with --enable-alpha-plugins, run exec KRM functions")
	fs.StringVar(&o.loadRestrictor, "load-restrictor", "LoadRestrictionsRootOnly", "kustomize load restrictor: LoadRestrictionsRootOnly|LoadRestrictionsNone")
	fs.BoolVar(&o.noRemote, "no-remote", false, "refuse kustomizations that name remote resources (URLs, git repositories) before fetching anything (= spec.render.remote: deny)")
	fs.StringArrayVar(&o.insecureRegistries, "insecure-registry", nil, "reach this registry host over plain HTTP (repeatable)")
	fs.StringVar(&o.platform, "platform", "", "pin this platform's manifest (os/arch) instead of the index")
	fs.IntVar(&o.jobs, "jobs", 8, "concurrent registry look-ups")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "deadline for the whole run (render, remote resources, rules, registry): exit 3 when it passes")
	fs.StringVar(&o.cacheDir, "cache", "", "cache registry answers in DIR, signed with a key kept outside it (digests for a day, tags for --tag-ttl)")
	fs.DurationVar(&o.tagTTL, "tag-ttl", 0, "with --cache, how long a tag→digest answer is reused (0: never cached)")
	fs.StringVar(&o.pullSecretsFrom, "pull-secrets-from", "", "registry credentials also from the imagePullSecrets (pod spec, else ServiceAccount) the workloads use in the cluster of kubeconfig context `CONTEXT`; without it no cluster is asked")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "with --pull-secrets-from, the kubeconfig `FILE` (default $KUBECONFIG, ~/.kube/config)")
	addPolicyFlags(fs, o)
	addHelmFlags(fs, o)
	addLockFlags(fs, o, pin)
	if pin || name == "check" {
		addSignatureFlags(fs, o)
	}
	if name == "check" {
		fs.StringVar(&o.baseline, "baseline", "", "findings whose fingerprint is in this baseline `FILE` are existing: shown, counted, not failing")
		fs.StringVar(&o.writeBaseline, "write-baseline", "", "write the run's findings' fingerprints to `FILE` (atomically); they are existing from then on")
	}
	if !pin {
		fs.StringVar(&o.appsRoot, "apps-root", "", "the input's Argo CD Applications deploy this repository, checked out at DIR: render and check their sources")
		fs.StringArrayVar(&o.repoURLs, "repo-url", nil, "with --apps-root: the repoURL(s) of the checkout (default: its git remotes; without remotes the first repository a source names is taken for it, said by an INFO line, and any other is no verdict)")
		fs.StringVar(&o.targetBranch, "target-branch", "", "with --apps-root: the `BRANCH` the checkout merges into; sources tracking it (or HEAD, the checkout's branch or commit) render from the checkout, other revisions of the local history from a temporary worktree, unknown ones are no verdict (default: spec.argocd.targetBranch, else the remote's default branch)")
	}
	if pin {
		fs.BoolVar(&o.dropTag, "drop-tag", false, "write repo@sha256:… instead of repo:tag@sha256:…")
		fs.StringVar(&o.writeKustomization, "write-kustomization", "", "write the digests into DIR's kustomization images: (atomically)")
	}
	return fs
}

// parse parses args; it returns done=true with an exit code for --help
// (the command's help on stdout, exit 0) and usage errors (exit 2, naming
// the flag or argument, with the closest real one). A command takes at most
// maxArgs positional arguments.
func parse(fs *pflag.FlagSet, args []string, s Streams, maxArgs int) (done bool, code int) {
	fs.SetOutput(s.Err)
	fs.Usage = func() {} // --help is printHelp, on stdout
	name := fs.Name()[strings.LastIndex(fs.Name(), " ")+1:]
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			printHelp(s.Out, name, fs)
			return true, ExitPass
		}
		fmt.Fprintf(s.Err, "%s: %s\nRun 'kubectl gate %s --help' for its flags.\n", fs.Name(), flagError(fs, err), name)
		return true, ExitUsage
	}
	if extra := fs.Args(); len(extra) > maxArgs {
		return true, fail(s.Err, unexpectedArgs(extra[maxArgs:]))
	}
	return false, 0
}

// reportOptions are the printer's options for these flags: color only on
// a TTY, without --no-color or NO_COLOR (no-color.org).
func (o *options) reportOptions(tty, failOnWarning bool, version string) report.Options {
	wd, _ := os.Getwd()
	fallback := ""
	if len(o.files) > 0 && o.files[0] != "-" {
		fallback = o.files[0]
	}
	return report.Options{Format: o.output, Color: tty && !o.noColor && os.Getenv("NO_COLOR") == "",
		Quiet: o.quiet, Verbose: o.verbose, FailOnWarning: failOnWarning, Version: version,
		Rules: reportRules(), FallbackLocation: fallback, BaseDir: wd}
}

// checkPaths explains input paths given to the wrong flag or not there
// (pathMistake): exit 2 before anything runs, with what was meant.
func (o *options) checkPaths() error {
	for _, in := range []struct {
		flag  string
		paths []string
	}{{"-k", o.kustomizations}, {"--chart", o.charts}, {"--config", []string{o.configFile}}, {"-f", o.files}} {
		for _, p := range in.paths {
			if p == "" || p == "-" {
				continue
			}
			if err := pathMistake(in.flag, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// validate checks flag values and inputs.
func (o *options) validate(pin bool) error {
	if len(o.kustomizations) == 0 && len(o.files) == 0 && len(o.charts) == 0 && (!pin || o.writeKustomization == "") {
		return usageErr("flags", "no input: give -k DIR, --chart DIR or -f FILE|DIR|-")
	}
	if err := o.validateHelm(); err != nil {
		return err
	}
	if o.quiet && o.verbose {
		return usageErr("--quiet", "and --verbose contradict each other: give one")
	}
	if !report.ValidFormat(o.output) {
		return usageErr("--output", "%q is not one of %s%s", o.output, strings.Join(report.Formats, ", "), suggest(o.output, report.Formats))
	}
	if o.failOn != "error" && o.failOn != "warning" {
		return usageErr("--fail-on", "%q is not error or warning%s", o.failOn, suggest(o.failOn, []string{"error", "warning"}))
	}
	if o.loadRestrictor != "LoadRestrictionsRootOnly" && o.loadRestrictor != "LoadRestrictionsNone" {
		return usageErr("--load-restrictor", "%q is not LoadRestrictionsRootOnly or LoadRestrictionsNone", o.loadRestrictor)
	}
	if o.enableExec && !o.enableAlphaPlugins {
		return usageErr("--enable-exec", "needs --enable-alpha-plugins, as with kustomize")
	}
	if o.maxInputBytes < 1 {
		return usageErr("--max-input-bytes", "%d is less than 1", o.maxInputBytes)
	}
	if o.jobs < 1 {
		return usageErr("--jobs", "%d is less than 1", o.jobs)
	}
	// Flag values (--rule, --digest, --platform) are checked once here, so
	// a bad one is a usage error (2) before anything is rendered, not a
	// per-input failure (3).
	if err := o.apply(config.Default()); err != nil {
		return err
	}
	if err := o.policy.Validate(); err != nil {
		return err
	}
	return o.validatePullSecretFlags()
}

// apply merges flag values into the config spec, validating as config does.
func (o *options) apply(s *config.Spec) error {
	if o.expectResources >= 0 {
		n := o.expectResources
		s.Render.ExpectResources = &n
	}
	if o.digest != "" {
		s.Images.Digest = o.digest
	}
	if o.requirePinnedBy {
		s.Images.RequirePinnedBy = true
	}
	if o.policiesFromRender {
		s.PoliciesFromRender = true
	}
	if o.noRemote {
		s.Render.Remote = config.RemoteDeny
	}
	if o.failOn == config.FailOnWarning {
		s.FailOn = config.FailOnWarning
	}
	if o.platform != "" {
		s.Images.Platform = o.platform
	}
	if o.kubernetesVersion != "" {
		s.Schema.KubernetesVersion = o.kubernetesVersion
	}
	if err := o.applyLock(s); err != nil {
		return err
	}
	if err := o.applySignatures(s); err != nil {
		return err
	}
	s.Schema.CRDs = append(s.Schema.CRDs, config.PathEntries(o.crds...)...)
	s.Schema.IgnoreMissing = append(s.Schema.IgnoreMissing, o.ignoreMissingSchema...)
	s.Images.InsecureRegistries = append(s.Images.InsecureRegistries, o.insecureRegistries...)
	s.ArgoCD.Exclude = append(s.ArgoCD.Exclude, o.excludeApps...)
	s.ArgoCD.FromFlag = append(s.ArgoCD.FromFlag, o.excludeApps...)
	for _, f := range o.imageFields {
		kind, path, ok := strings.Cut(f, ":")
		if !ok || kind == "" || path == "" {
			return usageErr("--image-field", "%q is not KIND:PATH (Engine:spec.runners[].imageRef)", f)
		}
		s.Images.Fields = append(s.Images.Fields, config.ImageField{Kind: kind, Path: path})
	}
	// --policy adds to spec.policies (absolute, so no config directory
	// applies to them); selftest's policy mutants read spec.policies.
	policies := append([]config.Entry{}, s.Policies...)
	for _, p := range o.policy.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return usageErr("--policy", "%q: %v", p, err)
		}
		policies = append(policies, config.Entry{Path: abs})
	}
	s.Policies = policies
	for _, r := range o.ruleOverrides {
		id, sev, ok := strings.Cut(r, "=")
		if !ok {
			return usageErr("--rule", "%q is not ID=error|warning|off", r)
		}
		if !slices.Contains(ruleIDs(), id) {
			return usageErr("--rule", "unknown rule id %q%s; kubectl gate rules lists them", id, suggest(id, ruleIDs()))
		}
		if s.Rules == nil {
			s.Rules = map[string]string{}
		}
		s.Rules[id] = sev
	}
	if err := s.Validate(); err != nil {
		return &config.UsageError{Where: "flags", Err: err}
	}
	return nil
}

// denyRemoteFrom turns --no-remote on when the trusted config (--config)
// denies remote resources: renders happen before any in-tree Gate is read,
// so only the caller's config can stop a fetch (an in-tree deny fails the
// render afterwards, runner.check).
func (o *options) denyRemoteFrom(base *config.Object) {
	if base != nil && base.Spec.Render.RemoteDenied() {
		o.noRemote = true
	}
}

// inputs are the inputs the flags name.
func (o *options) inputs(stdin io.Reader) pipeline.Inputs {
	return pipeline.Inputs{
		Kustomizations: o.kustomizations, Files: o.files, Recursive: o.recursive, Stdin: stdin,
		Charts: o.charts, AppsRoot: o.appsRoot, RepoURLs: o.repoURLs, TargetBranch: o.targetBranch, CheckoutBranch: o.checkoutBranch,
	}
}

// pipelineOptions are the pipeline's options: the trusted config (base,
// from --config), the flags on top of every unit's config (apply), and how
// to render, resolve and evaluate policies.
func (o *options) pipelineOptions(base *config.Object, version string, progress func(string)) pipeline.Options {
	return pipeline.Options{
		Config: base, ConfigPath: o.configFile, Flags: o.apply, FlagsDecide: o.verdictFlags(),
		Render: pipeline.RenderOptions{
			EnableAlphaPlugins: o.enableAlphaPlugins,
			EnableExec:         o.enableExec,
			LoadRestrictorNone: o.loadRestrictor == "LoadRestrictionsNone",
			NoRemote:           o.noRemote,
			MaxInputBytes:      o.maxInputBytes,
		},
		Helm:   o.helm,
		Policy: o.policy,
		Registry: pipeline.RegistryOptions{
			Jobs: o.jobs, Timeout: o.timeout, CacheDir: o.cacheDir, CacheKey: cacheKey, TagTTL: o.tagTTL,
			PullSecrets: newPullSecrets(o),
		},
		DropTag:  o.dropTag,
		Lock:     o.lockBuilder(),
		Version:  version,
		Progress: progress,
	}
}

// verdictFlags reports whether flags change the config's verdict (rules,
// digest mode, failOn, pinned-by, expected resources, schema target).
func (o *options) verdictFlags() bool { return len(o.verdictFlagNames()) > 0 }

// verdictFlagNames lists the flags given that change the config's verdict,
// as the report's flags layer names them (what it set).
func (o *options) verdictFlagNames() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"--rule", len(o.ruleOverrides) > 0}, {"--digest", o.digest != ""}, {"--fail-on", o.failOn == config.FailOnWarning},
		{"--require-pinned-by", o.requirePinnedBy}, {"--expect-resources", o.expectResources >= 0},
		{"--kubernetes-version", o.kubernetesVersion != ""}, {"--crd", len(o.crds) > 0}, {"--exclude-app", len(o.excludeApps) > 0},
		{"--image-field", len(o.imageFields) > 0}, {"--ignore-missing-schema", len(o.ignoreMissingSchema) > 0}, {"--lock", o.locks.lock != ""},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// nameFlags fills the report's flags layers with the flags given.
func (o *options) nameFlags(r *finding.Report) {
	names := o.verdictFlagNames()
	for i := range r.Configs {
		for j := range r.Configs[i].Sources {
			if s := &r.Configs[i].Sources[j]; s.Source == finding.ConfigFlags {
				s.Sets = names
			}
		}
	}
}
