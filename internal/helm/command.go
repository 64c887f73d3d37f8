package helm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"helm.sh/helm/v4/pkg/action"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// Version is the helm release whose SDK renders charts here, reported by
// `version` so that kustomize accepts the gate as its helm command.
const Version = "v4.3.2"

// Environment variables the gate sets when it runs kustomize with itself as
// the helm command.
const (
	// EnvRepoCache passes --helm-repo-cache to the helm command.
	EnvRepoCache = "KUBECTL_GATE_HELM_REPO_CACHE"
	// EnvAnnotateSources makes `template` stamp AnnoSource (the template's
	// absolute path) on every object, so findings from a kustomize
	// helmCharts: render name the chart template. Unset, the output is
	// exactly helm's.
	EnvAnnotateSources = "KUBECTL_GATE_HELM_SOURCES"
	// EnvKubeVersion is Capabilities.KubeVersion of a `template` without
	// --kube-version (a helmCharts: entry with no kubeVersion): the
	// Kubernetes version the gate validates the render for.
	EnvKubeVersion = "KUBECTL_GATE_HELM_KUBE_VERSION"
)

// Command answers the helm command lines kustomize's helmCharts runs
// (kustomize build --enable-helm --helm-command G): `G version` and
// `G template [NAME] CHART [flags]` on a local chart directory. A remote
// chart (`pull`, --repo, oci://) is refused with a message naming it:
// nothing is fetched. It returns helm's exit code: 0, or 1 with the error
// on stderr.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if err := command(ctx, args, stdout); err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	return 0
}

func command(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("no helm command given; the gate answers `version` and `template`")
	}
	switch args[0] {
	case "version":
		return printVersion(args[1:], stdout)
	case "template":
		return template(ctx, args[1:], stdout)
	case "pull":
		return fmt.Errorf("helm pull %s: the gate does not fetch charts; vendor the chart under the kustomization's charts/ directory",
			strings.Join(args[1:], " "))
	}
	return fmt.Errorf("helm %s: the gate answers only `version` and `template`", args[0])
}

func printVersion(args []string, w io.Writer) error {
	fs := pflag.NewFlagSet("version", pflag.ContinueOnError)
	short := fs.Bool("short", false, "")
	fs.BoolP("client", "c", false, "")
	fs.String("template", "", "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("helm version: %w", err)
	}
	if *short {
		_, err := fmt.Fprintln(w, Version)
		return err
	}
	_, err := fmt.Fprintf(w, "version.BuildInfo{Version:%q, GitCommit:\"\", GitTreeState:\"\", GoVersion:\"\"}\n", Version)
	return err
}

// templateFlags parses `helm template`'s flags that change the render. Flags
// that only matter for fetching (--version, --devel) are accepted and have
// no effect on a local chart, as in helm; --repo is refused.
func templateFlags(args []string) (Options, []string, *action.Install, error) {
	var o Options
	inst := action.NewInstall(action.NewConfiguration())
	fs := pflag.NewFlagSet("template", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "")
	fs.StringSliceVarP(&o.ValueFiles, "values", "f", nil, "")
	fs.StringArrayVar(&o.Set, "set", nil, "")
	fs.StringArrayVar(&o.SetString, "set-string", nil, "")
	fs.StringArrayVar(&o.SetFile, "set-file", nil, "")
	fs.StringArrayVar(&o.SetJSON, "set-json", nil, "")
	fs.StringArrayVar(&o.SetLiteral, "set-literal", nil, "")
	fs.StringVar(&o.KubeVersion, "kube-version", "", "")
	fs.StringSliceVarP(&o.APIVersions, "api-versions", "a", nil, "")
	fs.BoolVar(&o.IncludeCRDs, "include-crds", false, "")
	fs.BoolVar(&o.SkipTests, "skip-tests", false, "")
	fs.BoolVar(&o.NoHooks, "no-hooks", false, "")
	fs.BoolVar(&o.SkipSchemaValidation, "skip-schema-validation", false, "")
	fs.BoolVarP(&inst.GenerateName, "generate-name", "g", false, "")
	fs.StringVar(&inst.NameTemplate, "name-template", "", "")
	repo := fs.String("repo", "", "")
	for _, ignored := range []string{"skip-crds", "debug", "devel"} {
		fs.Bool(ignored, false, "")
	}
	fs.String("version", "", "")
	if err := fs.Parse(args); err != nil {
		return o, nil, nil, fmt.Errorf("helm template: %w", err)
	}
	if *repo != "" {
		return o, nil, nil, fmt.Errorf("helm template --repo %s: the gate does not fetch charts", *repo)
	}
	return o, fs.Args(), inst, nil
}

func template(ctx context.Context, args []string, w io.Writer) error {
	o, rest, inst, err := templateFlags(args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return errors.New("helm template: no chart given")
	}
	// `helm template CHART` names the release "release-name" (helm's
	// template command sets it before NameAndChart); only install needs a
	// name or --generate-name.
	inst.ReleaseName = DefaultReleaseName
	name, chartPath, err := inst.NameAndChart(rest)
	if err != nil {
		return fmt.Errorf("helm template: %w", err)
	}
	o.ReleaseName = name
	if !IsChart(chartPath) {
		return fmt.Errorf("helm template %s: not a local chart directory; the gate does not fetch charts", chartPath)
	}
	o.RepoCache = os.Getenv(EnvRepoCache)
	if o.KubeVersion == "" {
		o.KubeVersion = os.Getenv(EnvKubeVersion)
	}
	docs, err := Template(ctx, chartPath, o)
	if err != nil {
		return err
	}
	if os.Getenv(EnvAnnotateSources) != "" {
		abs, err := filepath.Abs(chartPath)
		if err != nil {
			return fmt.Errorf("resolving chart path %s: %w", chartPath, err)
		}
		if docs, err = annotateDocs(docs, abs); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := Print(&buf, docs); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// annotateDocs re-encodes each document with AnnoSource set to the
// template's path under chartDir (Parse sets it).
func annotateDocs(docs []Document, chartDir string) ([]Document, error) {
	out := make([]Document, 0, len(docs))
	for _, d := range docs {
		nodes, err := Parse([]Document{d}, chartDir)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if len(nodes) > 0 {
			if err := (kio.ByteWriter{Writer: &b}).Write(nodes); err != nil {
				return nil, fmt.Errorf("encoding %s: %w", d.Source, err)
			}
		}
		out = append(out, Document{Source: d.Source, Body: b.String()})
	}
	return out, nil
}
