package argocd

import (
	"sort"
	"strings"

	"github.com/kubectl-gate/kubectl-gate/internal/argo"
	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// IgnoreDifferences fires on ignoreDifferences entries that hide what Argo CD must diff (argo.IgnoreDifferences judges them).
var IgnoreDifferences = rules.Rule{
	ID: "argocd-ignore-differences", Default: finding.SeverityError, Family: "argocd",
	Doc:      "an ignoreDifferences entry (Application, ApplicationSet template, argocd-cm resource.customizations, or argocd-operator's ArgoCD resourceIgnoreDifferences/resourceCustomizations/extraConfig) has no kind, covers every object of a kind with a path outside the allow-list (/status and its children are allowed: the controller writes them), hides /, /spec, /metadata, /spec/template or a whole object, or by jq the image of every container (a jqPathExpression is judged by what Argo CD's del(EXPR) removes from an object of its kind, however it is written; one that does not parse, errors there, or that the gate does not evaluate within its budget is a finding too), or trusts a human field manager (kubectl, kubectl-edit, …)",
	Outage:   "a hand edit or a wrong image drifts in the cluster while Argo CD shows Synced",
	Fix:      "name a kind and a narrow path (a field, not /spec or a whole object), or add the pointer to argocd.ignoreDifferencesAllowed in the trusted config; never trust a human field manager",
	Mutation: "widen an ignoreDifferences pointer to /spec",
	Reads:    reads,
	Check:    checkIgnoreDifferences,
	Mutants: []rules.Mutant{
		{Name: "widen an ignoreDifferences pointer to /spec", Apply: rules.OnResources(widenIgnoreDifferences)},
	},
}

func checkIgnoreDifferences(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, r := range c.Resources {
		out = append(out, argo.IgnoreDifferences(r, c.Config)...)
	}
	return out
}

// widenIgnoreDifferences sets the first JSON pointer of an Application's
// ignoreDifferences to /spec, or adds such an entry; else it widens the
// first ignoreDifferences key of argocd-cm; else the first
// resourceIgnoreDifferences entry of an ArgoCD resource (argocd-operator),
// or adds one.
func widenIgnoreDifferences(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
	for _, r := range rs {
		if argo.IsApplication(r) {
			return rs, widenApp(r) == nil
		}
	}
	for _, r := range rs {
		if r.GetKind() == "ConfigMap" && r.GetName() == "argocd-cm" && widenConfigMap(r) {
			return rs, true
		}
	}
	for _, r := range rs {
		if argo.Is(r, "ArgoCD") {
			return rs, widenOperator(r) == nil
		}
	}
	return nil, false
}

// widenOperator sets the jsonPointers of the ArgoCD resource's first
// resourceIgnoreDifferences.resourceIdentifiers entry (else of all) to
// /spec, or adds an entry for Deployments that does so.
func widenOperator(cr *yaml.RNode) error {
	ids, err := cr.Pipe(yaml.LookupCreate(yaml.SequenceNode, "spec", "resourceIgnoreDifferences", "resourceIdentifiers"))
	if err != nil {
		return err
	}
	if entries, _ := ids.Elements(); len(entries) > 0 {
		c, err := entries[0].Pipe(yaml.LookupCreate(yaml.MappingNode, "customization"))
		if err != nil {
			return err
		}
		return c.PipeE(yaml.SetField("jsonPointers", yaml.NewListRNode("/spec")))
	}
	entry, err := yaml.Parse("{group: apps, kind: Deployment, customization: {jsonPointers: [/spec]}}")
	if err != nil {
		return err
	}
	return ids.PipeE(yaml.Append(entry.YNode()))
}
func widenApp(app *yaml.RNode) error {
	list, err := app.Pipe(yaml.LookupCreate(yaml.SequenceNode, "spec", "ignoreDifferences"))
	if err != nil {
		return err
	}
	entries, _ := list.Elements()
	if len(entries) == 0 {
		entry := yaml.NewMapRNode(&map[string]string{"group": "apps", "kind": "Deployment"})
		if err := list.PipeE(yaml.Append(entry.YNode())); err != nil {
			return err
		}
		entries = []*yaml.RNode{entry}
	}
	return entries[0].PipeE(yaml.SetField("jsonPointers", yaml.NewListRNode("/spec")))
}
func widenConfigMap(cm *yaml.RNode) bool {
	data := cm.GetDataMap()
	keys := make([]string, 0, len(data))
	for k := range data {
		if strings.HasPrefix(k, "resource.customizations.ignoreDifferences.") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		n, err := yaml.Parse(data[key])
		if err != nil || n.PipeE(yaml.SetField("jsonPointers", yaml.NewListRNode("/spec"))) != nil {
			continue
		}
		if data[key], err = n.String(); err != nil {
			continue
		}
		cm.SetDataMap(data)
		return true
	}
	return false
}
