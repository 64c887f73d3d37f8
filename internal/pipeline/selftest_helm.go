package pipeline

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/helm"
	"github.com/kubectl-gate/kubectl-gate/internal/render"
	"github.com/kubectl-gate/kubectl-gate/internal/selftest"
)

// helmMutant is selftest's Helm mutant (issue 13 §5) on a --chart input or
// an Argo CD Helm source of --apps-root: the chart value that turns a
// blue/green Rollout's autoPromotionEnabled on is found (selftest.
// FindAutoPromotionValue), the chart is rendered again with it set to true
// — `--set PATH=true` for --chart, one more helm.parameters entry for the
// Application — and rollout-bluegreen-autopromotion must stop the render.
// ok is false for other inputs and when the configuration turns the rule
// off (its "off" row is listed already).
func (s *session) helmMutant(ctx context.Context, u *Unit, opts gate.Options, deps gate.Deps, failOnWarning bool) (selftest.Row, bool, error) {
	const rule = selftest.HelmAutoPromotionRule
	row := selftest.Row{Rule: rule, Mutant: selftest.HelmAutoPromotionName, Got: "n/a"}
	if opts.Config.Rules[rule] == finding.Off {
		return row, false, nil
	}
	var (
		candidates []string
		with       selftest.RenderWith
		how        string
	)
	switch {
	case isChart(u.Source):
		dir, o := u.Source.(*Chart).Dir, s.chartOptions(u)
		var err error
		if candidates, err = helm.FalseBools(dir, o); err != nil {
			return row, true, err
		}
		with = func(ctx context.Context, path string) ([]*yaml.RNode, error) {
			m := o
			m.Set = append(slices.Clone(o.Set), path+"=true")
			res, err := render.Chart(ctx, dir, m)
			if err != nil {
				return nil, err
			}
			return res.Resources, nil
		}
		how = "--set %s=true"
	case isAppSource(u.Source):
		spec := u.Source.(*AppSource).spec
		o, isHelm, err := spec.HelmOptions()
		if err != nil || !isHelm {
			return row, false, nil
		}
		if candidates, err = helm.FalseBools(spec.Dir, o); err != nil {
			return row, true, err
		}
		ropts := s.renderOptions()
		with = func(_ context.Context, path string) ([]*yaml.RNode, error) {
			res, err := render.RenderArgo(spec.WithHelmParameter(path, "true"), ropts)
			if err != nil {
				return nil, err
			}
			return res.Resources, nil
		}
		how = "helm.parameters %s=true"
	default:
		return row, false, nil
	}
	path, mutated, err := selftest.FindAutoPromotionValue(ctx, u.Resources, candidates, with)
	if err != nil {
		return row, true, err
	}
	if path == "" {
		row.Mutant += " (no false boolean value of the chart turns a blue/green Rollout's autoPromotionEnabled on)"
		return row, true, nil
	}
	name := row.Mutant + " (" + fmt.Sprintf(how, path) + ")"
	row, err = selftest.RunRender(ctx, rule, name, mutated, u.Resources, opts, deps, failOnWarning)
	if err != nil {
		return row, true, fmt.Errorf("running the Helm value mutant: %w", err)
	}
	return row, true, nil
}

func isChart(s Source) bool     { _, ok := s.(*Chart); return ok }
func isAppSource(s Source) bool { _, ok := s.(*AppSource); return ok }

// mutants is selftest's Helm mutant on a --chart input (helmMutant).
func (c *Chart) mutants(ctx context.Context, s *session, u *Unit, opts gate.Options, deps gate.Deps, failOnWarning bool) ([]selftest.Row, error) {
	return s.helmRow(ctx, u, opts, deps, failOnWarning)
}

// mutants is selftest's Helm mutant on an Argo CD Helm source (helmMutant).
func (a *AppSource) mutants(ctx context.Context, s *session, u *Unit, opts gate.Options, deps gate.Deps, failOnWarning bool) ([]selftest.Row, error) {
	return s.helmRow(ctx, u, opts, deps, failOnWarning)
}

func (s *session) helmRow(ctx context.Context, u *Unit, opts gate.Options, deps gate.Deps, failOnWarning bool) ([]selftest.Row, error) {
	row, ok, err := s.helmMutant(ctx, u, opts, deps, failOnWarning)
	if err != nil || !ok {
		return nil, err
	}
	return []selftest.Row{row}, nil
}
