package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/live"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
	"github.com/kubectl-gate/kubectl-gate/internal/report"
)

// statusOptions are the flags of `status`.
type statusOptions struct {
	kube          *genericclioptions.ConfigFlags
	revision      string
	gitDir        string
	kustomize     string
	appsRoot      string
	repoURLs      []string
	targetBranch  string
	output        string
	failOn        string
	timeout       time.Duration
	configFile    string
	ruleOverrides []string
	destContext   string
	wait          bool
}

// defaultArgoNamespace is where Argo CD keeps its Applications by default.
const defaultArgoNamespace = "argocd"

func newStatusFlagSet(o *statusOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("kubectl gate status", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: kubectl gate status APP [-n argocd] [--revision SHA | --git DIR] [-k DIR | --apps-root DIR] [flags]\n\n"+
			"Is the green light telling the truth? Reads the Argo CD Application APP, the objects it\n"+
			"manages and the pods of its workloads, and checks the synced commit, the running images,\n"+
			"the object count and the objects' health. Exit 0 pass, 1 violations, 2 usage, 3 no verdict.\n\nFlags:\n%s", fs.FlagUsages())
	}
	fs.StringVar(&o.revision, "revision", "", "the expected commit SHA (live-revision)")
	fs.StringVar(&o.gitDir, "git", "", "expect the HEAD commit of the git repository at DIR (live-revision)")
	fs.StringVarP(&o.kustomize, "kustomize", "k", "", "render this kustomization as the expected state: images (live-images) and object count (live-resource-count)")
	fs.StringVar(&o.appsRoot, "apps-root", "", "the Application's repository checked out at DIR: render its sources from there as the expected state (instead of -k)")
	fs.StringArrayVar(&o.repoURLs, "repo-url", nil, "with --apps-root: the repoURL(s) of the checkout (default: its git remotes)")
	fs.StringVar(&o.targetBranch, "target-branch", "", "with --apps-root: the `BRANCH` the checkout stands for; sources tracking it (or HEAD, the checkout's branch or commit) render from the checkout, other revisions of the local history from a temporary worktree, unknown ones are no verdict (default: the remote's default branch)")
	fs.StringVarP(&o.output, "output", "o", "text", "output format: "+strings.Join(report.Formats, "|"))
	fs.StringVar(&o.failOn, "fail-on", "error", "lowest severity that fails the gate: error|warning")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "deadline for the whole command (with --wait: 5m)")
	fs.BoolVar(&o.wait, "wait", false, "read again, with backoff, until every check passes (exit 0) or --timeout passes (exit 1 with what is still wrong; exit 3 if the cluster is unreachable then)")
	fs.StringVar(&o.configFile, "config", "", "a Gate object: rule severities, the ignoreDifferences allow-list")
	fs.StringArrayVar(&o.ruleOverrides, "rule", nil, "override a rule's severity: ID=error|warning|off (repeatable)")
	fs.StringVar(&o.destContext, "dest-context", "", "the kubeconfig context of the cluster the Application deploys to, when that is not Argo CD's own")
	ns := defaultArgoNamespace
	o.kube = genericclioptions.NewConfigFlags(false)
	o.kube.Namespace = &ns
	o.kube.AddFlags(fs)
	fs.Lookup("namespace").Usage = "the namespace of the Argo CD Application"
	return fs
}

// runStatus implements `status APP [--wait]`.
func runStatus(ctx context.Context, args []string, s Streams, version string) int {
	o := &statusOptions{}
	fs := newStatusFlagSet(o)
	// status says itself how many Applications it takes.
	if done, code := parse(fs, args, s, len(args)); done {
		return code
	}
	if o.wait && !fs.Changed("timeout") {
		o.timeout = defaultWaitTimeout
	}
	app, spec, err := o.validate(fs.Args())
	if err != nil {
		return fail(s.Err, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, o.timeout, &statusDeadline{d: o.timeout})
	defer cancel()
	began := time.Now()
	exp, err := o.expect(ctx, spec)
	if err != nil {
		return noVerdict(s, err)
	}
	argo, dest, err := o.readers()
	if err != nil {
		return noVerdict(s, err)
	}
	probe := o.probe(argo, dest, app, exp)
	failOnWarning := o.failOn == config.FailOnWarning || spec.FailOnWarning()
	if o.wait {
		return o.waitFor(ctx, s, probe, began, failOnWarning, version)
	}
	res, err := probe(ctx)
	if err != nil {
		return noVerdict(s, err)
	}
	return o.report(s, res, time.Since(began), failOnWarning, version)
}

// probe returns the one read-and-judge of status: gather the live state,
// render the Application's sources with --apps-root (again only when they
// changed), judge.
func (o *statusOptions) probe(argo, dest live.Reader, app string, exp live.Expect) live.Probe {
	var renderedFor string
	return func(ctx context.Context) (*live.Result, error) {
		snap, err := live.Gather(ctx, argo, dest, *o.kube.Namespace, app)
		if err != nil {
			return nil, err
		}
		if o.appsRoot != "" {
			// The Application, just read, names the sources to render.
			if key := sourcesKey(snap.AppObject); key != renderedFor || !exp.HasRender {
				exp.Render, exp.RenderFrom, err = pipeline.ExpectedFromApplication(ctx, snap.AppObject, o.appsRoot, o.repoURLs, o.targetBranch)
				if err != nil {
					return nil, err
				}
				exp.HasRender, renderedFor = true, key
			}
		}
		return live.Judge(snap, exp), nil
	}
}

// report prints the verdict on one judged state and returns its exit code.
func (o *statusOptions) report(s Streams, res *live.Result, took time.Duration, failOnWarning bool, version string) int {
	rep := &finding.Report{Findings: res.Findings, Resources: res.Managed}
	if o.output == "text" {
		printGlance(s.Out, res, took)
	}
	if err := report.Write(s.Out, rep, report.Options{Format: o.output, Color: s.OutIsTTY, FailOnWarning: failOnWarning, Version: version, Rules: reportRules()}); err != nil {
		return fail(s.Err, err)
	}
	if rep.Verdict(failOnWarning) != finding.VerdictPass {
		return ExitViolation
	}
	return ExitPass
}

// validate checks the arguments and builds the config spec.
func (o *statusOptions) validate(args []string) (string, *config.Spec, error) {
	switch {
	case len(args) != 1:
		return "", nil, usageErr("status", "want exactly one Application name, got %d argument(s)", len(args))
	case o.revision != "" && o.gitDir != "":
		return "", nil, usageErr("--revision", "give --revision SHA or --git DIR, not both")
	case o.kustomize != "" && o.appsRoot != "":
		return "", nil, usageErr("--apps-root", "give -k DIR or --apps-root DIR for the expected render, not both")
	case o.appsRoot != "" && !isDir(o.appsRoot):
		return "", nil, usageErr("--apps-root", "%q is not a directory", o.appsRoot)
	case !report.ValidFormat(o.output):
		return "", nil, usageErr("--output", "%q is not one of %s", o.output, strings.Join(report.Formats, ", "))
	case o.failOn != "error" && o.failOn != "warning":
		return "", nil, usageErr("--fail-on", "%q is not error or warning", o.failOn)
	case o.timeout <= 0:
		return "", nil, usageErr("--timeout", "%s is not positive", o.timeout)
	case *o.kube.Namespace == "":
		return "", nil, usageErr("--namespace", "must not be empty")
	}
	base, err := loadConfig(o.configFile)
	if err != nil {
		return "", nil, err
	}
	spec := config.Default()
	if base != nil {
		spec = &base.Spec
	}
	for _, r := range o.ruleOverrides {
		id, sev, ok := strings.Cut(r, "=")
		if !ok {
			return "", nil, usageErr("--rule", "%q is not ID=error|warning|off", r)
		}
		if err := spec.SetRule(id, sev); err != nil {
			return "", nil, &config.UsageError{Where: "--rule", Err: err}
		}
	}
	return args[0], spec, nil
}

// expect resolves the expected commit and renders the expected state of
// -k; --apps-root renders it later, from the sources of the Application
// read from the cluster (appsRender).
func (o *statusOptions) expect(ctx context.Context, spec *config.Spec) (live.Expect, error) {
	exp := live.Expect{Config: spec, Revision: o.revision, RevisionFrom: "--revision"}
	if o.gitDir != "" {
		sha, err := gitHead(ctx, o.gitDir)
		if err != nil {
			return exp, err
		}
		exp.Revision, exp.RevisionFrom = sha, "HEAD of --git "+o.gitDir
	}
	if o.kustomize != "" {
		res, err := pipeline.ExpectedFromKustomization(o.kustomize)
		if err != nil {
			return exp, err
		}
		exp.Render, exp.HasRender, exp.RenderFrom = res, true, "-k "+o.kustomize
	}
	return exp, nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// gitHead returns the HEAD commit of the repository at dir.
func gitHead(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("reading the HEAD commit of --git %s: %w", dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// readers builds the reader of Argo CD's cluster from the cluster flags
// and, with --dest-context, the reader of the destination cluster (nil
// without it).
func (o *statusOptions) readers() (argo, dest live.Reader, err error) {
	if argo, err = o.reader(o.kube, "the kubeconfig"); err != nil || o.destContext == "" {
		return argo, nil, err
	}
	destFlags := genericclioptions.NewConfigFlags(false)
	destFlags.KubeConfig, destFlags.Context = o.kube.KubeConfig, &o.destContext
	dest, err = o.reader(destFlags, "--dest-context "+o.destContext)
	return argo, dest, err
}

func (o *statusOptions) reader(flags *genericclioptions.ConfigFlags, what string) (live.Reader, error) {
	if err := clusterConfigured(flags); err != nil {
		return nil, fmt.Errorf("loading %s: %w", what, err)
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", what, err)
	}
	if cfg.Timeout == 0 || cfg.Timeout > o.timeout {
		cfg.Timeout = min(live.DefaultRequestTimeout, o.timeout)
	}
	return live.NewKubeReader(cfg)
}

// noVerdict prints why status could not finish and returns exit 3 (2 for
// a usage error, such as a bad Gate config in the -k kustomization).
func noVerdict(s Streams, err error) int {
	if exitCode(err) == ExitUsage {
		return fail(s.Err, err)
	}
	fmt.Fprintf(s.Err, "kubectl gate status: no verdict: %v\n", err)
	return ExitNoVerdict
}

// clusterConfigured refuses a kubeconfig that names no cluster: client-go
// would fall back to plain HTTP on localhost:8080 (clientcmd.ClusterDefaults)
// and the answer, or the refusal, would be about a cluster nobody chose.
func clusterConfigured(flags *genericclioptions.ConfigFlags) error {
	if flags.APIServer != nil && *flags.APIServer != "" {
		return nil
	}
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return err
	}
	if len(raw.Clusters) == 0 && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return errors.New("no cluster configured (the kubeconfig names none; set --kubeconfig, KUBECONFIG or --server): refusing to guess localhost:8080")
	}
	return nil
}
