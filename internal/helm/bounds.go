package helm

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/engine"

	"github.com/kubectl-gate/kubectl-gate/internal/fsbound"
	"github.com/kubectl-gate/kubectl-gate/internal/tmplbound"
)

// Bounds of one chart render (SECURITY.md, "Hostile input is bounded").
// Helm's engine renders every template into memory before it returns, so
// what can be bounded before the render is bounded there: the functions
// that multiply a small input (repeat, until, untilStep) refuse results
// over the caps; the rendered text and its documents are counted before
// they are parsed. What no cap catches (a tpl that includes itself) the
// process's memory cap ends (internal/supervise).
const (
	// DefaultMaxOutputBytes bounds a chart's rendered text.
	DefaultMaxOutputBytes = 64 << 20
	// DefaultMaxObjects bounds the documents a chart renders.
	DefaultMaxObjects = 100_000
)

// CapError is a render over one of the bounds: no verdict on the chart.
type CapError struct {
	Chart, What string
	Max         int64
}

func (e *CapError) Error() string {
	return fmt.Sprintf("rendering chart %s: %s over the cap of %d: no verdict", e.Chart, e.What, e.Max)
}

func (o Options) maxOutput() int64 {
	if o.MaxOutputBytes > 0 {
		return o.MaxOutputBytes
	}
	return DefaultMaxOutputBytes
}

func (o Options) maxObjects() int {
	if o.MaxObjects > 0 {
		return o.MaxObjects
	}
	return DefaultMaxObjects
}

// boundary returns the Root a chart's reads are bounded to.
func (o Options) boundary(dir string) (*fsbound.Root, error) {
	root := o.Root
	if root == "" {
		root = fsbound.For(dir)
	}
	r, err := fsbound.New(root, o.MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", dir, err)
	}
	return r, nil
}

// checkChart checks, before helm's loader reads it (it follows every
// symlink), that the chart directory or archive at p stays in the root.
func checkChart(root *fsbound.Root, p string) error {
	if strings.HasSuffix(p, ".tgz") || strings.HasSuffix(p, ".tar.gz") {
		return root.Check(p)
	}
	return root.CheckTree(p)
}

// checkValueFiles checks values files and --set-file files: one inside
// the root must stay in it; every one must be a regular file within the
// cap. (A file the caller names outside the root, such as kustomize's
// temporary values file, is the caller's.)
func checkValueFiles(root *fsbound.Root, o Options) error {
	files := append([]string(nil), o.ValueFiles...)
	for _, kv := range o.SetFile {
		if _, p, ok := strings.Cut(kv, "="); ok {
			files = append(files, p)
		}
	}
	for _, f := range files {
		if f == "-" || strings.Contains(f, "://") {
			continue // refused by mergeValues
		}
		var err error
		if root.Inside(f) {
			err = root.Check(f)
		} else {
			var r *fsbound.Root
			if r, err = fsbound.New(filepath.Dir(f), root.MaxFileBytes()); err == nil {
				err = r.Check(f)
			}
		}
		if err != nil {
			return fmt.Errorf("values file: %w", err)
		}
	}
	return nil
}

// precheck renders the chart's templates with helm's engine alone and
// counts the text and documents before the install action runs: the
// action splits and sorts every document it renders (a million tiny
// documents take minutes there), so a render over the caps must stop
// first. An engine error is left to the action, which reports it as helm
// does.
func precheck(ctx context.Context, ch *chart.Chart, vals map[string]any, inst *action.Install, dir string, o Options) error {
	caps := common.DefaultCapabilities.Copy()
	if inst.KubeVersion != nil {
		caps.KubeVersion = *inst.KubeVersion
	}
	caps.APIVersions = append(caps.APIVersions, inst.APIVersions...)
	rv, err := chartutil.ToRenderValuesWithSchemaValidation(ch, vals, common.ReleaseOptions{Name: inst.ReleaseName, Namespace: inst.Namespace, IsInstall: true}, caps, inst.SkipSchemaValidation)
	if err != nil {
		return nil
	}
	e := engine.Engine{CustomTemplateFuncs: tmplbound.Funcs(o.maxOutput())}
	files, err := e.RenderWithContext(ctx, ch, rv)
	if err != nil {
		return nil
	}
	var size int64
	docs := 0
	for _, text := range files {
		size += int64(len(text))
		docs += strings.Count(text, "\n---") + 1
	}
	switch {
	case size > o.maxOutput():
		return &CapError{Chart: dir, What: fmt.Sprintf("%d bytes of rendered text", size), Max: o.maxOutput()}
	case docs > o.maxObjects():
		return &CapError{Chart: dir, What: fmt.Sprintf("%d rendered documents", docs), Max: int64(o.maxObjects())}
	}
	return nil
}
