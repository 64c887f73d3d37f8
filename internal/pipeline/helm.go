package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/helm"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
)

// Helm charts (README "Use: Helm charts"): --chart renders a chart
// directory like `helm template`; --enable-helm lets a -k kustomization's
// helmCharts: run, with the gate itself as the helm command unless
// --helm-command names another; --helm-repo-cache serves chart dependencies
// no charts/ directory holds (also for Argo CD Helm sources).

// HelmOptions say how Inputs.Charts and a kustomization's helmCharts:
// render (README "Use: Helm charts").
type HelmOptions struct {
	// Values, Set, SetString, SetFile, Release, Namespace, KubeVersion,
	// APIVersions, SkipCRDs, SkipTests and SkipSchema are helm template's
	// for Inputs.Charts.
	Values, Set, SetString, SetFile []string
	Release, Namespace, KubeVersion string
	APIVersions                     []string
	SkipCRDs, SkipTests, SkipSchema bool
	// RepoCache holds chart archives (NAME-VERSION.tgz) for dependencies
	// that name a remote repository (also for Argo CD Helm sources).
	RepoCache string
	// EnableHelm runs kustomize's helmCharts:, with HelmCommand as the
	// helm binary; without one, the running binary serves as helm
	// (ServeHelm).
	EnableHelm  bool
	HelmCommand string
}

// Helm's defaults, for flag help.
const (
	DefaultReleaseName = helm.DefaultReleaseName
	DefaultKubeVersion = helm.DefaultKubeVersion
)

// chartOptions are the helm options of --chart.
func (h *HelmOptions) chartOptions() helm.Options {
	return helm.Options{
		ReleaseName: h.Release, Namespace: h.Namespace, ValueFiles: h.Values,
		Set: h.Set, SetString: h.SetString, SetFile: h.SetFile,
		KubeVersion: h.KubeVersion, APIVersions: h.APIVersions, IncludeCRDs: !h.SkipCRDs,
		SkipTests: h.SkipTests, SkipSchemaValidation: h.SkipSchema, RepoCache: h.RepoCache,
	}
}

// chartOptions are the helm options of a --chart unit: without
// --kube-version, Capabilities.KubeVersion is the Kubernetes version the
// schemas are checked against (--kubernetes-version, schema.kubernetesVersion),
// so a chart is rendered for the cluster it is validated for.
func (s *session) chartOptions(u *Unit) helm.Options {
	o := s.o.Helm.chartOptions()
	if o.KubeVersion != "" {
		return o
	}
	if spec, err := s.spec(u); err == nil && spec.Schema.KubernetesVersion != "" {
		o.KubeVersion = capabilitiesVersion(spec.Schema.KubernetesVersion)
	}
	return o
}

// helmKubeVersion is Capabilities.KubeVersion for Helm renders that name
// none (Argo CD Helm sources, kustomize helmCharts: entries): the
// Kubernetes version of the caller's config and flags, which the render is
// validated for, as Argo CD passes the destination cluster's. An in-tree
// Gate's version is not known before the render, so it does not count.
// Empty: helm's default.
func (s *session) helmKubeVersion() string {
	spec, err := s.spec(&Unit{})
	if err != nil || spec.Schema.KubernetesVersion == "" {
		return ""
	}
	return capabilitiesVersion(spec.Schema.KubernetesVersion)
}

// capabilitiesVersion is a Kubernetes version as Capabilities.KubeVersion:
// "1.34" → "v1.34.0", "1.34.2" → "v1.34.2".
func capabilitiesVersion(v string) string {
	v = strings.TrimPrefix(v, "v")
	if strings.Count(v, ".") == 1 {
		v += ".0"
	}
	return "v" + v
}

// chartUnits renders every --chart directory; made is told of each unit
// once it is rendered.
func (s *session) chartUnits(ctx context.Context, made func(*Unit)) []*Unit {
	var units []*Unit
	for _, dir := range s.in.Charts {
		u := &Unit{Source: &Chart{Dir: dir}}
		end := stop.Doing(ctx, "rendering Helm chart "+dir)
		res, err := render.Chart(ctx, dir, s.chartOptions(u))
		end()
		if err != nil {
			u.Err = fmt.Errorf("rendering Helm chart %s: %w", dir, err)
		} else {
			u.Resources = res.Resources
		}
		made(u)
		units = append(units, u)
	}
	return units
}

// command returns the helm command kustomize's helmCharts: run during
// -k renders, and a cleanup. Without --helm-command it is the gate itself,
// reached through a symlink named helm (the gate answers as helm when
// invoked under that name), with its template output annotated so findings
// name the chart template, and kubeVersion (helmKubeVersion) as
// Capabilities.KubeVersion of entries that set no kubeVersion.
func (h *HelmOptions) command(kubeVersion string) (string, func(), error) {
	noop := func() {}
	if !h.EnableHelm {
		return "", noop, nil
	}
	if h.RepoCache != "" {
		abs, err := filepath.Abs(h.RepoCache)
		if err != nil {
			return "", noop, fmt.Errorf("resolving --helm-repo-cache %s: %w", h.RepoCache, err)
		}
		if err := os.Setenv(helm.EnvRepoCache, abs); err != nil {
			return "", noop, fmt.Errorf("setting %s: %w", helm.EnvRepoCache, err)
		}
	}
	if h.HelmCommand != "" {
		return h.HelmCommand, noop, nil
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
	if err := os.Setenv(helm.EnvKubeVersion, kubeVersion); err != nil {
		cleanup()
		return "", noop, fmt.Errorf("setting %s: %w", helm.EnvKubeVersion, err)
	}
	return link, cleanup, nil
}

// ServeHelm answers as the helm command kustomize runs for helmCharts:
// (the binary invoked as helm, through the symlink command makes) and
// returns its exit code.
func ServeHelm(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return helm.Command(ctx, args, stdout, stderr)
}
