package plugin

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/schema"
)

// unit is one render the gate checks: a kustomization, or all -f inputs.
type unit struct {
	name      string
	dir       string // the kustomization directory, for -k
	resources []*yaml.RNode
	placement []finding.Finding
	// found is the Gate/Pin config of the top-level kustomization, if any.
	found *config.Object
	// injected: origin annotations were switched on by the gate.
	injected bool
	// remote lists the remote resources the render fetched.
	remote []render.RemoteRef
	err    error
	// apps holds the renders of the unit's Argo CD Applications' sources;
	// source is set on a unit that is such a render (--apps-root, apps.go).
	apps   []argo.AppSource
	source *appSource
	// chart is set on a unit rendered from --chart.
	chart bool
	// generated is set on a unit an ApplicationSet or a Flux object
	// generated; expanded lists the ApplicationSets of this unit that were
	// expanded (generated.go).
	generated *generatedUnit
	expanded  []string
}

// loadUnits renders every -k directory concurrently and reads the -f
// inputs as one more unit. A unit that fails keeps its error.
func loadUnits(ctx context.Context, o *options, stdin io.Reader, progress func(string)) []*unit {
	units := make([]*unit, len(o.kustomizations))
	helmCmd, cleanup, err := o.helm.command()
	defer cleanup()
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(4)
	var mu sync.Mutex
	done := 0
	for i, dir := range o.kustomizations {
		g.Go(func() error {
			defer func() {
				if err := recovered(recover()); err != nil {
					units[i] = &unit{name: dir, dir: dir, err: err}
				}
			}()
			units[i] = renderUnit(ctx, dir, o, helmCmd, err)
			mu.Lock()
			done++
			progress(fmt.Sprintf("rendered %d/%d kustomizations", done, len(o.kustomizations)))
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	units = append(units, chartUnits(ctx, &o.helm)...)
	if len(o.files) > 0 {
		u := &unit{name: fmt.Sprint(o.files)}
		end := doing(ctx, "reading -f "+strings.Join(o.files, " "))
		var roots []string
		if o.recursive {
			// -R: a nested kustomization root is rendered, not read raw
			// (render.FilesAndRoots).
			u.resources, roots, u.err = render.FilesAndRoots(o.files, stdin, true, o.maxInputBytes)
		} else {
			u.resources, u.err = render.Files(o.files, stdin, false, o.maxInputBytes)
		}
		end()
		if u.err != nil || len(u.resources) > 0 || len(roots) == 0 {
			units = append(units, u)
		}
		for _, dir := range roots {
			units = append(units, renderUnit(ctx, dir, o, helmCmd, err))
		}
	}
	return units
}

// renderUnit renders a -k directory; helmErr is why the helm command could
// not be set up, a failure of every render that asks for it.
func renderUnit(ctx context.Context, dir string, o *options, helmCmd string, helmErr error) *unit {
	defer doing(ctx, "rendering "+dir)()
	u := &unit{name: dir, dir: dir}
	if helmErr != nil {
		u.err = helmErr
		return u
	}
	opts := o.renderOptions()
	opts.EnableHelm, opts.HelmCommand = o.helm.enableHelm, helmCmd
	res, err := render.Kustomize(dir, opts)
	if err != nil {
		u.err = err
		return u
	}
	u.resources, u.placement, u.injected, u.remote = res.Resources, res.Placement, res.Injected, res.Remote
	if obj, ok := res.Config(); ok {
		u.found = obj
	}
	return u
}

// specFor picks a unit's config: --config (else the defaults), tightened by
// the Gate/Pin of the top-level kustomization (config.Tighten); flags
// apply on top.
func specFor(u *unit, base *config.Object, o *options) (*config.Spec, error) {
	// The caller's config (--config, else the defaults) is the floor: a
	// Gate/Pin inside the render, which a pull request controls, may only
	// tighten it unless --config says spec.allowInTreeLoosening
	// (SECURITY.md).
	trusted := *config.Default()
	if base != nil {
		trusted = base.Spec
	}
	spec := trusted
	if u.found != nil {
		spec = config.Tighten(trusted, u.found.Spec, ruleDefaults())
	}
	spec = cloneSpec(spec)
	if err := o.apply(&spec); err != nil {
		return nil, err
	}
	return &spec, nil
}

// cloneSpec copies the maps and slices flags append to.
func cloneSpec(s config.Spec) config.Spec {
	rulesCopy := make(map[string]string, len(s.Rules))
	for k, v := range s.Rules {
		rulesCopy[k] = v
	}
	s.Rules = rulesCopy
	s.Images.InsecureRegistries = append([]string(nil), s.Images.InsecureRegistries...)
	s.Schema.CRDs = append([]string(nil), s.Schema.CRDs...)
	return s
}

// crdsFor reads the CRDs that --crd and schema.crds name; a path that cannot
// be read is a usage error (exit 2), never a silently thinner schema set.
func crdsFor(spec *config.Spec) ([]*yaml.RNode, error) {
	if len(spec.Schema.CRDs) == 0 {
		return nil, nil
	}
	crds, err := schema.LoadCRDFiles(spec.Schema.CRDs)
	if err != nil {
		return nil, &config.UsageError{Where: "--crd / schema.crds", Err: err}
	}
	return crds, nil
}
