package images

import (
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// PinnedBy fires on workloads the Pin transformer did not stamp (--require-pinned-by).
var PinnedBy = rules.Rule{
	ID: "image-pinned-by", Default: finding.SeverityError, Family: "images",
	Doc:       "--require-pinned-by: a workload lacks the kubectl-gate.dev/pinned stamp of the Pin transformer (the KRM step did not run)",
	Outage:    "exec functions are skipped silently without --enable-exec, and an unpinned render ships",
	Fix:       "list the Pin transformer last under transformers: and build with --enable-alpha-plugins --enable-exec, or pin with kubectl gate pin --write-kustomization",
	Mutation:  "remove the pinned stamp",
	PerObject: true,
	Check:     checkPinnedBy,
	Mutants: []rules.Mutant{
		{Name: "remove the Pin transformer's stamp", Apply: rules.OnResources(removeStamp)},
	},
}

func checkPinnedBy(c *rules.Context) []finding.Finding {
	if !c.Config.Images.RequirePinnedBy {
		return nil
	}
	var out []finding.Finding
	done := map[*yaml.RNode]bool{}
	eachImage(c, func(w workloadImage) {
		if done[w.obj] || w.obj.GetAnnotations()[manifest.AnnoPinned] != "" {
			return
		}
		done[w.obj] = true
		out = append(out, manifest.Finding("image-pinned-by", finding.SeverityError, w.obj, "metadata.annotations", nil,
			"workload has no %s annotation: the Pin transformer did not run on it (exec functions are skipped without --enable-exec)", manifest.AnnoPinned))
	})
	return out
}
