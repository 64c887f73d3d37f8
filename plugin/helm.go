package plugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/helm"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
)

// Helm charts (README "Use: Helm charts"): --chart renders a chart
// directory like `helm template`; --enable-helm lets a -k kustomization's
// helmCharts: run, with the gate itself as the helm command unless
// --helm-command names another; --helm-repo-cache serves chart dependencies
// no charts/ directory holds (also for Argo CD Helm sources).

// helmOptions are the Helm flags of check, pin and selftest.
type helmOptions struct {
	charts      []string
	values      []string
	set         []string
	setString   []string
	setFile     []string
	release     string
	namespace   string
	kubeVersion string
	apiVersions []string
	skipCRDs    bool
	skipTests   bool
	skipSchema  bool
	repoCache   string
	enableHelm  bool
	helmCommand string
}

func addHelmFlags(fs *pflag.FlagSet, h *helmOptions) {
	fs.StringArrayVar(&h.charts, "chart", nil, "render this local Helm chart directory in process, as `helm template` (repeatable)")
	fs.StringArrayVar(&h.values, "values", nil, "with --chart: a values file (repeatable; later ones win)")
	fs.StringArrayVar(&h.set, "set", nil, "with --chart: set a value, path=value (repeatable)")
	fs.StringArrayVar(&h.setString, "set-string", nil, "with --chart: set a STRING value, path=value (repeatable)")
	fs.StringArrayVar(&h.setFile, "set-file", nil, "with --chart: set a value from a file, path=FILE (repeatable)")
	fs.StringVar(&h.release, "release", "", "with --chart: the release name (default "+helm.DefaultReleaseName+")")
	fs.StringVarP(&h.namespace, "namespace", "n", "", "with --chart: the release namespace (default \"default\")")
	fs.StringVar(&h.kubeVersion, "kube-version", "", "with --chart: Capabilities.KubeVersion (default "+helm.DefaultKubeVersion+")")
	fs.StringArrayVar(&h.apiVersions, "api-versions", nil, "with --chart: add an API version to Capabilities.APIVersions (repeatable)")
	fs.BoolVar(&h.skipCRDs, "skip-crds", false, "with --chart: leave out the chart's crds/ (included by default, as Argo CD does)")
	fs.BoolVar(&h.skipTests, "skip-tests", false, "with --chart: leave out test hooks")
	fs.BoolVar(&h.skipSchema, "skip-schema-validation", false, "with --chart: do not enforce values.schema.json")
	fs.StringVar(&h.repoCache, "helm-repo-cache", "", "chart archives (NAME-VERSION.tgz, as in helm's repository cache) for dependencies that name a remote repository; without it such a chart is no verdict")
	fs.BoolVar(&h.enableHelm, "enable-helm", false, "with -k: run kustomize helmCharts: (as kustomize build --enable-helm)")
	fs.StringVar(&h.helmCommand, "helm-command", "", "with --enable-helm: the helm binary kustomize runs (default: the gate itself)")
}

func (h *helmOptions) validate() error {
	if len(h.charts) == 0 {
		for name, set := range map[string]bool{"--values": len(h.values) > 0, "--set": len(h.set) > 0, "--set-string": len(h.setString) > 0,
			"--set-file": len(h.setFile) > 0, "--release": h.release != "", "--namespace": h.namespace != "",
			"--kube-version": h.kubeVersion != "", "--api-versions": len(h.apiVersions) > 0} {
			if set {
				return usageErr(name, "needs --chart")
			}
		}
	}
	if h.helmCommand != "" && !h.enableHelm {
		return usageErr("--helm-command", "needs --enable-helm, as with kustomize")
	}
	return nil
}

// chartOptions are the helm options of --chart.
func (h *helmOptions) chartOptions() helm.Options {
	return helm.Options{
		ReleaseName: h.release, Namespace: h.namespace, ValueFiles: h.values,
		Set: h.set, SetString: h.setString, SetFile: h.setFile,
		KubeVersion: h.kubeVersion, APIVersions: h.apiVersions, IncludeCRDs: !h.skipCRDs,
		SkipTests: h.skipTests, SkipSchemaValidation: h.skipSchema, RepoCache: h.repoCache,
	}
}

// chartUnits renders every --chart directory.
func chartUnits(ctx context.Context, h *helmOptions) []*unit {
	var units []*unit
	for _, dir := range h.charts {
		u := &unit{name: dir, chart: true}
		end := doing(ctx, "rendering Helm chart "+dir)
		res, err := render.Chart(ctx, dir, h.chartOptions())
		end()
		if err != nil {
			u.err = fmt.Errorf("rendering Helm chart %s: %w", dir, err)
		} else {
			u.resources = res.Resources
		}
		units = append(units, u)
	}
	return units
}

// command returns the helm command kustomize's helmCharts: run during
// -k renders, and a cleanup. Without --helm-command it is the gate itself,
// reached through a symlink named helm (the gate answers as helm when
// invoked under that name), with its template output annotated so findings
// name the chart template.
func (h *helmOptions) command() (string, func(), error) {
	noop := func() {}
	if !h.enableHelm {
		return "", noop, nil
	}
	if h.repoCache != "" {
		abs, err := filepath.Abs(h.repoCache)
		if err != nil {
			return "", noop, fmt.Errorf("resolving --helm-repo-cache %s: %w", h.repoCache, err)
		}
		if err := os.Setenv(helm.EnvRepoCache, abs); err != nil {
			return "", noop, fmt.Errorf("setting %s: %w", helm.EnvRepoCache, err)
		}
	}
	if h.helmCommand != "" {
		return h.helmCommand, noop, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", noop, fmt.Errorf("finding the gate's own binary to serve as helm: %w", err)
	}
	dir, err := os.MkdirTemp("", "kubectl-gate-helm-")
	if err != nil {
		return "", noop, fmt.Errorf("creating a directory for the helm command: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	link := filepath.Join(dir, "helm")
	if err := os.Symlink(self, link); err != nil {
		cleanup()
		return "", noop, fmt.Errorf("linking the gate as helm: %w", err)
	}
	if err := os.Setenv(helm.EnvAnnotateSources, "1"); err != nil {
		cleanup()
		return "", noop, fmt.Errorf("setting %s: %w", helm.EnvAnnotateSources, err)
	}
	return link, cleanup, nil
}

// runHelm answers as helm: `kubectl-gate helm …`, or the binary invoked as
// helm (a symlink, kustomize's --helm-command).
func runHelm(ctx context.Context, args []string, s Streams) int {
	return helm.Command(ctx, args, s.Out, s.Err)
}

func isChart(dir string) bool { return helm.IsChart(dir) }
