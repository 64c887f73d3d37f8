package live

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
)

// ignoreDifferences runs the judgement of the static
// argocd-ignore-differences rule (argo.IgnoreDifferences) on the live
// Application: an entry that hides too much hides human
// edits from Argo CD's diff, whether it came from git or was added by hand.
func ignoreDifferences(app *unstructured.Unstructured, cfg *config.Spec) []finding.Finding {
	node := toRNode(app)
	if node == nil {
		return nil
	}
	fs := argo.IgnoreDifferences(node, cfg)
	for i := range fs {
		fs[i].Rule = "argocd-ignore-differences"
	}
	return fs
}
