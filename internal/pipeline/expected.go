package pipeline

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
)

// ExpectedFromApplication renders, from the checkout at root, every source
// of the live Application obj that deploys manifests, the way `check --apps-root` renders
// an Application of the input (render.SkipSource, render.LocalSource, render.RenderArgo),
// and returns the renders concatenated — the expected state of
// `status --apps-root` — with where they came from:
// "--apps-root . (spec.source.path examples/overlays/prod)".
//
// A source that cannot be rendered from root (a Helm chart, a plugin,
// another repository) is an error, never left out: the live objects compared
// with part of the render would give a false verdict.
func ExpectedFromApplication(obj *unstructured.Unstructured, root string, repoURLs []string) ([]*yaml.RNode, string, error) {
	app, err := yaml.FromMap(obj.Object)
	if err != nil {
		return nil, "", fmt.Errorf("reading Application %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	name := argo.AppName(app)
	remotes := render.CheckoutURLs(root, repoURLs)
	opts := render.Options{}
	var out []*yaml.RNode
	var from []string
	for _, src := range argo.Sources(app) {
		if !src.Manifests() {
			continue
		}
		where := fmt.Sprintf("Application %s %s", name, src.Field)
		if why := render.SkipSource(root, remotes, src); why != "" {
			return nil, "", notRendered(where, root, why)
		}
		spec, err := render.LocalSource(root, app, src)
		if err != nil {
			return nil, "", err
		}
		res, err := render.RenderArgo(spec, opts)
		var skip *render.SkipError
		switch {
		case errors.As(err, &skip):
			return nil, "", notRendered(where, root, fmt.Sprintf("%s %q: %s", src.PathField(), src.Path, skip.Reason))
		case err != nil:
			return nil, "", fmt.Errorf("%s: %s %q: %w", where, src.PathField(), src.Path, err)
		}
		out = append(out, res.Resources...)
		from = append(from, src.PathField()+" "+orDot(src.Path))
	}
	if len(from) == 0 {
		return nil, "", fmt.Errorf("Application %s names no source that deploys manifests: nothing to render from --apps-root %s", name, root)
	}
	return out, fmt.Sprintf("--apps-root %s (%s)", root, strings.Join(from, ", ")), nil
}

func notRendered(where, root, why string) error {
	return fmt.Errorf("%s is not rendered from --apps-root %s: %s; the expected render would lack it "+
		"(without --apps-root, status compares the running images with status.summary.images)", where, root, why)
}

func orDot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

// ExpectedFromKustomization renders dir, the expected state of `status -k`.
func ExpectedFromKustomization(dir string) ([]*yaml.RNode, error) {
	res, err := render.Kustomize(dir, render.Options{})
	if err != nil {
		return nil, err
	}
	return res.Resources, nil
}
