package plugin

import (
	"context"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
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
	err      error
	// apps holds the renders of the unit's Argo CD Applications' sources;
	// source is set on a unit that is such a render (--apps-root, apps.go).
	apps   []argo.AppSource
	source *appSource
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
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(4)
	var mu sync.Mutex
	done := 0
	for i, dir := range o.kustomizations {
		g.Go(func() error {
			units[i] = renderUnit(dir, o)
			mu.Lock()
			done++
			progress(fmt.Sprintf("rendered %d/%d kustomizations", done, len(o.kustomizations)))
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	if len(o.files) > 0 {
		u := &unit{name: fmt.Sprint(o.files)}
		u.resources, u.err = render.Files(o.files, stdin, o.recursive)
		units = append(units, u)
	}
	return units
}

func renderUnit(dir string, o *options) *unit {
	u := &unit{name: dir, dir: dir}
	res, err := render.Kustomize(dir, render.Options{
		EnableAlphaPlugins: o.enableAlphaPlugins,
		EnableExec:         o.enableExec,
		LoadRestrictorNone: o.loadRestrictor == "LoadRestrictionsNone",
	})
	if err != nil {
		u.err = err
		return u
	}
	u.resources, u.placement, u.injected = res.Resources, res.Placement, res.Injected
	if obj, ok := res.Config(); ok {
		u.found = obj
	}
	return u
}

// specFor picks a unit's config: --config wins, then the Gate/Pin of the
// top-level kustomization (the same config kustomize would run), then the
// default; flags apply on top.
func specFor(u *unit, base *config.Object, o *options) (*config.Spec, error) {
	var spec config.Spec
	switch {
	case base != nil:
		spec = base.Spec
	case u.found != nil:
		spec = u.found.Spec
	default:
		spec = *config.Default()
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
	return s
}
