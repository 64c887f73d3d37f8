package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// renderJobs bounds the renders that run at once.
const renderJobs = 4

// load renders every -k directory concurrently, every --chart, and reads
// the -f inputs as one more unit. A unit that fails keeps its error. With
// Options.ReleaseRenders, each render is checked as soon as it is made
// when nothing after reads it again (settle).
func (s *session) load(ctx context.Context, res *Result) []*Unit {
	var checking sync.Mutex
	units := make([]*Unit, len(s.in.Kustomizations))
	helmCmd, cleanup, err := s.o.Helm.command(s.helmKubeVersion())
	defer cleanup()
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(renderJobs)
	var mu sync.Mutex
	done := 0
	for i, dir := range s.in.Kustomizations {
		g.Go(func() error {
			defer func() {
				if err := stop.Recovered(recover()); err != nil {
					units[i] = &Unit{Source: &Kustomization{Dir: dir}, dir: dir, Err: err}
				}
			}()
			units[i] = s.renderKustomization(ctx, dir, helmCmd, err)
			s.settle(ctx, res, units[i], &checking)
			mu.Lock()
			done++
			s.progress(fmt.Sprintf("rendering %d/%d kustomizations done", done, len(s.in.Kustomizations)))
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	made := func(u *Unit) { s.settle(ctx, res, u, &checking) }
	units = append(units, s.chartUnits(ctx, made)...)
	if len(s.in.Files) > 0 {
		units = append(units, s.fileUnits(ctx, helmCmd, err, made)...)
	}
	return units
}

// settle, on a run with Options.ReleaseRenders, checks (with Pin: pins)
// an input's render as soon as it is made and drops its trees (Pin keeps
// it as the bytes it prints, Unit.KeepYAML), when nothing after reads
// them: it holds no
// Argo CD or Flux object (leaf), so the expansion plans nothing from it
// and no unit's Applications name it, and its own check reads no other
// unit. The run's memory then grows with the renders being made, not with
// every input. One unit is checked at a time (checking).
func (s *session) settle(ctx context.Context, res *Result, u *Unit, checking *sync.Mutex) {
	o := s.o
	if !o.ReleaseRenders || o.Reuse != nil || o.Precheck != nil || u.Err != nil || !leaf(u.Resources) {
		return
	}
	checking.Lock()
	res.checkUnit(ctx, u)
	checking.Unlock()
	if u.Err == nil {
		u.drop(o.Pin)
	}
}

// fileUnits reads the -f inputs as one unit, and with -R renders each
// nested kustomization root as a unit of its own; made is told of each
// unit once it is read or rendered.
func (s *session) fileUnits(ctx context.Context, helmCmd string, helmErr error, made func(*Unit)) []*Unit {
	u := &Unit{Source: &Files{Paths: s.in.Files}}
	max := s.o.Render.MaxInputBytes
	if max == 0 {
		max = stream.DefaultMaxBytes
	}
	end := stop.Doing(ctx, "reading -f "+strings.Join(s.in.Files, " "))
	var roots []string
	if s.in.Recursive {
		// -R: a nested kustomization root is rendered, not read raw
		// (render.FilesAndRoots).
		u.Resources, roots, u.Err = render.FilesAndRoots(s.in.Files, s.in.Stdin, true, max)
	} else if st := s.streamedCheck(u); st != nil {
		var read *render.Read
		u.Resources, read, u.Err = render.FilesEach(s.in.Files, s.in.Stdin, max, st.Each)
		switch {
		case u.Err != nil:
		case st.Whole():
			u.Resources, u.Err = read.Again()
		default:
			u.streamed, u.read = st, read
		}
	} else {
		u.Resources, u.Err = render.Files(s.in.Files, s.in.Stdin, false, max)
	}
	end()
	var units []*Unit
	// A file that does not read or parse (a values file, malformed YAML
	// in a directory) is no verdict on it, and the other files are still
	// judged and reported: read again, past it, as a unit of their own;
	// each bad file is a unit with its error (the run stays no verdict, as
	// for an --apps-root source that fails to render beside others).
	var fe *render.FileError
	var bad []*Unit
	if errors.As(u.Err, &fe) && !slices.Contains(s.in.Files, render.Stdin) {
		nodes, again, failed, err := render.FilesPartial(s.in.Files, s.in.Recursive, max)
		if err == nil && len(failed) > 0 {
			u, roots = &Unit{Source: &Files{Paths: s.in.Files}, Resources: nodes}, again
			for _, b := range failed {
				bad = append(bad, &Unit{Source: &Files{Paths: []string{b.Path}}, Err: b.Err})
			}
			if len(nodes) == 0 {
				u = nil
			}
		}
	}
	if u != nil && (u.Err != nil || len(u.Resources) > 0 || len(roots) == 0) {
		made(u)
		units = append(units, u)
	}
	for _, b := range bad {
		made(b)
		units = append(units, b)
	}
	for _, dir := range roots {
		k := s.renderKustomization(ctx, dir, helmCmd, helmErr)
		made(k)
		units = append(units, k)
	}
	return units
}

// streamedCheck is the check of the -f unit as it is read
// (gate.Streamed), or nil when this run checks it whole: it pins, renders
// -R, reuses or prechecks renders, evaluates policies, or cannot tell its
// config yet (check says why). An Argo CD or Flux object makes the
// render one to check whole.
func (s *session) streamedCheck(u *Unit) *gate.Streamed {
	o := s.o
	if !o.ReleaseRenders || o.Pin || o.Reuse != nil || o.Precheck != nil || s.in.Recursive {
		return nil
	}
	spec, err := s.spec(u)
	if err != nil || s.policies(spec) {
		return nil
	}
	crds, err := crdsFor(spec)
	if err != nil {
		return nil
	}
	opts := gate.Options{Config: spec, CRDs: crds}
	return gate.NewStreamed(opts, gate.Deps{}, func(r *yaml.RNode) bool { return !leaf([]*yaml.RNode{r}) })
}

// renderKustomization renders a -k directory; helmErr is why the helm
// command could not be set up, a failure of every render that asks for it.
func (s *session) renderKustomization(ctx context.Context, dir, helmCmd string, helmErr error) *Unit {
	defer stop.Doing(ctx, "rendering "+dir)()
	u := &Unit{Source: &Kustomization{Dir: dir}, dir: dir}
	if helmErr != nil {
		u.Err = helmErr
		return u
	}
	opts := s.renderOptions()
	opts.EnableHelm, opts.HelmCommand = s.o.Helm.EnableHelm, helmCmd
	res, err := render.Kustomize(dir, opts)
	if err != nil {
		u.Err = err
		return u
	}
	u.rendered(res)
	return u
}

// rendered keeps what a kustomize render returned.
func (u *Unit) rendered(res *render.Result) {
	u.Resources, u.placement, u.injected, u.remote, u.local = res.Resources, res.Placement, res.Injected, res.Remote, res.LocalConfig
	if obj, ok := res.Config(); ok {
		u.found = obj
	}
}
