package plugin

import (
	"fmt"

	"github.com/kubectl-gate/kubectl-gate/internal/baseline"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/pipeline"
)

// applyBaseline writes --write-baseline and applies --baseline to the
// run's findings. A run without a verdict writes nothing: its findings are
// not all there. The baseline just written is applied too: its findings
// are existing from now on.
func applyBaseline(o *options, base *config.Object, total *finding.Report) error {
	var spec *config.Spec
	if base != nil {
		spec = &base.Spec
	}
	keep := pipeline.Suppressible(spec)
	if path := o.writeBaseline; path != "" {
		if total.Verdict(false) == finding.VerdictNoVerdict {
			return fmt.Errorf("--write-baseline %s: not written, the run has no verdict", path)
		}
		b := baseline.Build(total.Findings, keep)
		if err := b.Write(path); err != nil {
			return err
		}
		total.Fixed = b.Apply(total.Findings, "baseline "+path, keep)
	}
	if path := o.baseline; path != "" {
		b, err := baseline.Load(path)
		if err != nil {
			return usageErr("--baseline", "%v", err)
		}
		total.Fixed = b.Apply(total.Findings, "baseline "+path, keep)
	}
	return nil
}
