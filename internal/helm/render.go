package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/cli/values"
	"helm.sh/helm/v4/pkg/getter"
	release "helm.sh/helm/v4/pkg/release/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/gcfloor"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
	"github.com/kubectl-gate/kubectl-gate/internal/tmplbound"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// DefaultReleaseName is the release name `helm template` uses when none is
// given.
const DefaultReleaseName = "release-name"

// DefaultKubeVersion is .Capabilities.KubeVersion when none is given: what
// the helm v4.3.2 CLI reports (helm derives it from the client-go it links,
// v0.37.2 → v1.37.0). Set here because the SDK answers v1.20.0 inside tests.
const DefaultKubeVersion = "v1.37.0"

// Options are `helm template`'s flags that change what a chart renders.
// The zero value renders like `helm template release-name DIR -n default`.
type Options struct {
	// ReleaseName is .Release.Name; DefaultReleaseName when empty.
	ReleaseName string
	// Namespace is .Release.Namespace; "default" when empty.
	Namespace string
	// ValueFiles are -f/--values files, in order (later ones win). A URL
	// or "-" is refused: nothing is fetched and stdin is the caller's.
	ValueFiles []string
	// InlineValues are YAML documents merged after ValueFiles, in order, as
	// further --values files would be (Argo CD's helm.values and
	// helm.valuesObject are passed that way).
	InlineValues [][]byte
	// Set, SetString, SetFile, SetJSON and SetLiteral are --set,
	// --set-string, --set-file, --set-json and --set-literal, each
	// "path=value" (comma-separated lists allowed where helm allows them).
	Set, SetString, SetFile, SetJSON, SetLiteral []string
	// KubeVersion is --kube-version (Capabilities.KubeVersion);
	// DefaultKubeVersion when empty.
	KubeVersion string
	// APIVersions are --api-versions, added to helm's default set.
	APIVersions []string
	// IncludeCRDs is --include-crds: the chart's crds/ files are rendered
	// too (Argo CD passes it unless skipCrds is set).
	IncludeCRDs bool
	// NoHooks is --no-hooks: hook templates are left out.
	NoHooks bool
	// SkipTests is --skip-tests: test hooks are left out.
	SkipTests bool
	// SkipSchemaValidation is --skip-schema-validation: values.schema.json
	// is not enforced.
	SkipSchemaValidation bool
	// Root bounds every file the render reads (the chart, its file://
	// dependencies, values files inside it): fsbound.For(dir) when empty.
	// A symlink leaving it, a file:// dependency outside it, a FIFO or
	// device, or a file over MaxFileBytes is an error naming the path.
	Root string
	// MaxFileBytes caps each file (0: fsbound.DefaultMaxFileBytes);
	// MaxOutputBytes the rendered text (0: DefaultMaxOutputBytes);
	// MaxObjects the rendered documents (0: DefaultMaxObjects).
	MaxFileBytes, MaxOutputBytes int64
	MaxObjects                   int
	// RepoCache is a directory of chart archives (<name>-<version>.tgz, the
	// layout of helm's own repository cache) where dependencies that
	// name a remote repository are looked up.
	RepoCache string
}

// Document is one rendered manifest and the chart file it came from.
type Document struct {
	// Source is helm's "# Source:" path: the chart name, then the file
	// inside the chart ("web/templates/rollout.yaml").
	Source string
	// Body is the YAML text helm printed below the Source line.
	Body string
	// File, when set, is the template's file relative to the chart
	// directory where Source does not say it: a template of a subchart
	// loaded from a file:// directory outside charts/ ("../sub/templates/x.yaml").
	File string
}

// Template renders the chart at dir. Its output printed with Print is what
// `helm template` prints for the same flags.
func Template(ctx context.Context, dir string, o Options) ([]Document, error) {
	gcfloor.Raise(gcfloor.RenderFloor) // a render's garbage (gcfloor.RenderFloor)
	moved := map[string]string{}
	rel, err := run(ctx, dir, o, moved)
	if err != nil {
		return nil, err
	}
	size := int64(len(rel.Manifest))
	for _, h := range rel.Hooks {
		size += int64(len(h.Manifest))
	}
	if size > o.maxOutput() {
		return nil, &CapError{Chart: dir, What: fmt.Sprintf("%d bytes of rendered text", size), Max: o.maxOutput()}
	}
	docs := SplitManifest(rel.Manifest)
	if !o.NoHooks {
		for _, h := range rel.Hooks {
			if o.SkipTests && slices.Contains(h.Events, release.HookTest) {
				continue
			}
			docs = append(docs, Document{Source: h.Path, Body: h.Manifest})
		}
	}
	for i := range docs {
		docs[i].File = relocate(docs[i].Source, moved)
	}
	if len(docs) > o.maxObjects() {
		return nil, &CapError{Chart: dir, What: fmt.Sprintf("%d rendered documents", len(docs)), Max: int64(o.maxObjects())}
	}
	return docs, nil
}

// relocate is the file a template came from, relative to the chart
// directory, when a subchart loaded from a file:// directory holds it
// (moved, by the longest prefix); "" when Source says where it is.
func relocate(source string, moved map[string]string) string {
	_, rest, ok := strings.Cut(source, "/")
	if !ok || len(moved) == 0 {
		return ""
	}
	best := ""
	for prefix := range moved {
		if strings.HasPrefix(rest, prefix+"/") && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best == "" {
		return ""
	}
	return path.Join(moved[best], strings.TrimPrefix(rest, best+"/"))
}

// Print writes documents as `helm template` does.
func Print(w io.Writer, docs []Document) error {
	for _, d := range docs {
		if _, err := fmt.Fprintf(w, "---\n# Source: %s\n%s\n", d.Source, strings.TrimRight(d.Body, "\n")); err != nil {
			return fmt.Errorf("writing the rendered chart: %w", err)
		}
	}
	return nil
}

// Render renders the chart at dir and parses its objects. display is how
// the chart directory is named in findings (the path the user gave); each
// object's AnnoSource holds display joined with the template's path inside
// the chart.
func Render(ctx context.Context, dir, display string, o Options) ([]*yaml.RNode, error) {
	docs, err := Template(ctx, dir, o)
	if err != nil {
		return nil, err
	}
	objs, err := Parse(docs, display)
	if err != nil {
		return nil, err
	}
	// helm install, Argo CD and Flux decode the rendered text as kubectl
	// does, as YAML 1.1 (stream.ResolveAsKubectl): a template's plain
	// `tier: on` is the boolean true. (Parse alone, for kustomize's
	// helmCharts, leaves it as kustomize reads it.)
	for _, n := range objs {
		if err := stream.ResolveAsKubectl(n); err != nil {
			return nil, fmt.Errorf("reading %s rendered by helm: %w", orChart(yamlpath.Annotation(n.YNode(), AnnoSource)), err)
		}
	}
	return objs, nil
}

// run loads the chart, resolves its dependencies locally and runs helm's
// install action in client-only dry-run mode, the code path of `helm
// template`.
func run(ctx context.Context, dir string, o Options, moved map[string]string) (*release.Release, error) {
	if !IsChart(dir) {
		return nil, fmt.Errorf("rendering %s: %w", dir, ErrNotChart)
	}
	root, err := o.boundary(dir)
	if err != nil {
		return nil, err
	}
	// helm's loader follows every symlink of the chart and reads every
	// file whole: the tree is checked first (.Files.Get and .Files.Glob
	// see what it loaded).
	if err := checkChart(root, dir); err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	if err := checkValueFiles(root, o); err != nil {
		return nil, fmt.Errorf("reading values for chart %s: %w", dir, err)
	}
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	if err := installable(ch, dir); err != nil {
		return nil, err
	}
	if err := resolveDependencies(ch, dir, o.RepoCache, root, dir, "", moved); err != nil {
		return nil, err
	}
	vals, err := mergeValues(o)
	if err != nil {
		return nil, fmt.Errorf("reading values for chart %s: %w", dir, err)
	}
	inst, err := newInstall(o)
	if err != nil {
		return nil, err
	}
	if err := precheck(ctx, ch, vals, inst, dir, o); err != nil {
		return nil, err
	}
	ri, err := inst.RunWithContext(ctx, ch, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", dir, err)
	}
	rel, ok := ri.(*release.Release)
	if !ok {
		return nil, fmt.Errorf("rendering chart %s: unexpected release type %T", dir, ri)
	}
	return rel, nil
}

// installable refuses library charts, as helm install and template do.
func installable(ch *chart.Chart, dir string) error {
	switch ch.Metadata.Type {
	case "", "application":
		return nil
	}
	return fmt.Errorf("rendering chart %s: %s charts are not installable", dir, ch.Metadata.Type)
}

func newInstall(o Options) (*action.Install, error) {
	// helm's SDK logs through slog; the gate reports through findings.
	cfg := action.NewConfiguration()
	cfg.SetLogger(slog.New(slog.DiscardHandler).Handler())
	cfg.CustomTemplateFuncs = tmplbound.Funcs(o.maxOutput())
	inst := action.NewInstall(cfg)
	inst.DryRunStrategy = action.DryRunClient
	inst.Replace = true // `helm template` skips the name check the same way
	inst.ReleaseName = o.ReleaseName
	if inst.ReleaseName == "" {
		inst.ReleaseName = DefaultReleaseName
	}
	inst.Namespace = o.Namespace
	if inst.Namespace == "" {
		inst.Namespace = "default"
	}
	inst.IncludeCRDs = o.IncludeCRDs
	inst.DisableHooks = o.NoHooks
	inst.SkipSchemaValidation = o.SkipSchemaValidation
	inst.APIVersions = common.VersionSet(o.APIVersions)
	v := o.KubeVersion
	if v == "" {
		v = DefaultKubeVersion
	}
	kv, err := common.ParseKubeVersion(v)
	if err != nil {
		return nil, fmt.Errorf("parsing kube version %q: %w", v, err)
	}
	inst.KubeVersion = kv
	return inst, nil
}

// mergeValues merges values as helm's CLI does: files in order, then the
// --set family. Inline values go through temporary files so that they
// merge exactly like further --values files.
func mergeValues(o Options) (map[string]any, error) {
	files := slices.Clone(o.ValueFiles)
	for _, f := range files {
		if f == "-" || strings.Contains(f, "://") {
			return nil, fmt.Errorf("values file %q: only local files are read", f)
		}
	}
	if len(o.InlineValues) > 0 {
		tmp, err := os.MkdirTemp("", "gate-helm-values-")
		if err != nil {
			return nil, fmt.Errorf("creating a directory for inline values: %w", err)
		}
		defer os.RemoveAll(tmp)
		for i, v := range o.InlineValues {
			if err := validYAMLMap(v); err != nil {
				return nil, fmt.Errorf("inline values #%d: %w", i+1, err)
			}
			p := filepath.Join(tmp, fmt.Sprintf("values-%d.yaml", i))
			if err := os.WriteFile(p, v, 0o600); err != nil {
				return nil, fmt.Errorf("writing inline values: %w", err)
			}
			files = append(files, p)
		}
	}
	vo := values.Options{
		ValueFiles: files, Values: o.Set, StringValues: o.SetString,
		FileValues: o.SetFile, JSONValues: o.SetJSON, LiteralValues: o.SetLiteral,
	}
	// No getters: a values file or --set-file is read from disk only.
	return vo.MergeValues(getter.Providers{})
}

func validYAMLMap(b []byte) error {
	var m map[string]any
	if err := sigyaml.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("not a YAML mapping: %w", err)
	}
	return nil
}

// ErrNotChart says a directory holds no Chart.yaml.
var ErrNotChart = errors.New("not a Helm chart (no Chart.yaml)")

// IsChart reports whether dir holds a chart.
func IsChart(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "Chart.yaml"))
	return err == nil && !st.IsDir()
}
