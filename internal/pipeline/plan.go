package pipeline

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/stop"
	"github.com/kubectl-gate/kubectl-gate/internal/stream"
)

// renderJobs bounds the renders that run at once.
const renderJobs = 4

// load renders every -k directory concurrently, every --chart, and reads
// the -f inputs as one more unit. A unit that fails keeps its error.
func (s *session) load(ctx context.Context) []*Unit {
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
			mu.Lock()
			done++
			s.progress(fmt.Sprintf("rendering %d/%d kustomizations done", done, len(s.in.Kustomizations)))
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	units = append(units, s.chartUnits(ctx)...)
	if len(s.in.Files) > 0 {
		units = append(units, s.fileUnits(ctx, helmCmd, err)...)
	}
	return units
}

// fileUnits reads the -f inputs as one unit, and with -R renders each
// nested kustomization root as a unit of its own.
func (s *session) fileUnits(ctx context.Context, helmCmd string, helmErr error) []*Unit {
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
	} else {
		u.Resources, u.Err = render.Files(s.in.Files, s.in.Stdin, false, max)
	}
	end()
	var units []*Unit
	if u.Err != nil || len(u.Resources) > 0 || len(roots) == 0 {
		units = append(units, u)
	}
	for _, dir := range roots {
		units = append(units, s.renderKustomization(ctx, dir, helmCmd, helmErr))
	}
	return units
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
