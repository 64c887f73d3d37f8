package plugin

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
)

// Helm charts (README "Use: Helm charts"): --chart renders a chart
// directory like `helm template`; --enable-helm lets a -k kustomization's
// helmCharts: run, with the gate itself as the helm command unless
// --helm-command names another; --helm-repo-cache serves chart dependencies
// no charts/ directory holds (also for Argo CD Helm sources).

func addHelmFlags(fs *pflag.FlagSet, o *options) {
	h := &o.helm
	fs.StringArrayVar(&o.charts, "chart", nil, "render this local Helm chart `DIR` in process, as helm template does (repeatable)")
	fs.StringArrayVar(&h.Values, "values", nil, "with --chart: a values file (repeatable; later ones win)")
	fs.StringArrayVar(&h.Set, "set", nil, "with --chart: set a value, path=value (repeatable)")
	fs.StringArrayVar(&h.SetString, "set-string", nil, "with --chart: set a STRING value, path=value (repeatable)")
	fs.StringArrayVar(&h.SetFile, "set-file", nil, "with --chart: set a value from a file, path=FILE (repeatable)")
	fs.StringVar(&h.Release, "release", "", "with --chart: the release name (default "+pipeline.DefaultReleaseName+")")
	fs.StringVarP(&h.Namespace, "namespace", "n", "", "with --chart: the release namespace (default \"default\")")
	fs.StringVar(&h.KubeVersion, "kube-version", "", "with --chart: Capabilities.KubeVersion (default: --kubernetes-version, else "+pipeline.DefaultKubeVersion+")")
	fs.StringArrayVar(&h.APIVersions, "api-versions", nil, "with --chart: add an API version to Capabilities.APIVersions (repeatable)")
	fs.BoolVar(&h.SkipCRDs, "skip-crds", false, "with --chart: leave out the chart's crds/ (included by default, as Argo CD does)")
	fs.BoolVar(&h.SkipTests, "skip-tests", false, "with --chart: leave out test hooks")
	fs.BoolVar(&h.SkipSchema, "skip-schema-validation", false, "with --chart: do not enforce values.schema.json")
	fs.StringVar(&h.RepoCache, "helm-repo-cache", "", "chart archives (NAME-VERSION.tgz, as in helm's repository cache) for dependencies that name a remote repository; without it such a chart is no verdict")
	fs.BoolVar(&h.EnableHelm, "enable-helm", false, "with -k: run kustomize helmCharts: (as kustomize build --enable-helm)")
	fs.StringVar(&h.HelmCommand, "helm-command", "", "with --enable-helm: the helm binary kustomize runs (default: the gate itself)")
}

func (o *options) validateHelm() error {
	h := &o.helm
	if len(o.charts) == 0 {
		for name, set := range map[string]bool{"--values": len(h.Values) > 0, "--set": len(h.Set) > 0, "--set-string": len(h.SetString) > 0,
			"--set-file": len(h.SetFile) > 0, "--release": h.Release != "", "--namespace": h.Namespace != "",
			"--kube-version": h.KubeVersion != "", "--api-versions": len(h.APIVersions) > 0} {
			if set {
				return usageErr(name, "needs --chart")
			}
		}
	}
	if h.HelmCommand != "" && !h.EnableHelm {
		return usageErr("--helm-command", "needs --enable-helm, as with kustomize")
	}
	return nil
}

// runHelm answers as helm: `kubectl-gate helm …`, or the binary invoked as
// helm (a symlink, kustomize's --helm-command).
func runHelm(ctx context.Context, args []string, s Streams) int {
	return pipeline.ServeHelm(ctx, args, s.Out, s.Err)
}
