package rollouts

import (
	"fmt"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// AnalysisRef fires on analysis templates and args the controller cannot resolve.
var AnalysisRef = rules.Rule{
	ID: "rollout-analysis-ref", Default: finding.SeverityError, Family: "rollouts",
	Doc:      "an AnalysisTemplate (same namespace) or ClusterAnalysisTemplate (clusterScope: true) referenced from canary steps, background analysis, pre/postPromotionAnalysis, experiment analyses, a standalone Experiment's analyses or a template's nested templates is not in the render, or a template arg without value/valueFrom is not passed",
	Outage:   "a typo in a template name or a missing arg surfaces only at deploy time: the Rollout goes InvalidSpec, or the experiment fails, mid-rollout",
	Fix:      "add the AnalysisTemplate or ClusterAnalysisTemplate to the render (same namespace), correct its name, or pass every arg it declares without a value",
	Mutation: "misspell an AnalysisTemplate name",
	Follows:  follows,
	Reads:    reads,
	Check:    checkAnalysisRef,
	Mutants: []rules.Mutant{
		{Name: "misspell an AnalysisTemplate name", Apply: rules.OnResources(misspellAnyTemplate)},
	},
}

const ruleAnalysisRef = "rollout-analysis-ref"

// checkAnalysisRef resolves every analysis a Rollout references, as the
// controller does (rollout/analysis.go getAnalysisTemplatesFromRefs):
// AnalysisTemplates in the Rollout's namespace, ClusterAnalysisTemplates for
// clusterScope: true, nested spec.templates of found templates; then every
// template arg without value or valueFrom must be passed by the Rollout
// (utils/analysis MergeArgs: "args.X was not resolved").
func checkAnalysisRef(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, ro := range rollouts(c) {
		groups, path, err := analysisGroups(ro)
		if err != nil {
			out = append(out, unreadable(ruleAnalysisRef, ro, path, err))
			continue
		}
		for _, g := range groups {
			out = append(out, groupFindings(c, ro, g)...)
		}
	}
	// A standalone Experiment resolves its analyses as an experiment step's
	// do (experiments/experiment.go): issue 10 saw a missing one pass.
	for _, ex := range c.Index().Kind("Experiment") {
		if !isKind(ex, groupRollouts, "Experiment") || manifest.IsLocalConfig(ex) {
			continue
		}
		groups, path, err := experimentGroups(ex)
		if err != nil {
			out = append(out, unreadable(ruleAnalysisRef, ex, path, err))
			continue
		}
		for _, g := range groups {
			out = append(out, groupFindings(c, ex, g)...)
		}
	}
	return out
}

// experimentGroups returns the analyses of a standalone Experiment.
func experimentGroups(ex *yaml.RNode) ([]analysisGroup, string, error) {
	var analyses []experimentAnalysis
	if _, err := decodeAt(ex, "spec.analyses", &analyses); err != nil {
		return nil, "spec.analyses", err
	}
	var out []analysisGroup
	for i, a := range analyses {
		p := fmt.Sprintf("spec.analyses[%d]", i)
		out = append(out, analysisGroup{
			Path:       p,
			Refs:       []templateRef{{Path: p + ".templateName", Name: a.TemplateName, Cluster: a.ClusterScope == "true"}},
			Supplied:   supplied(a.Args),
			Experiment: true,
			Standalone: true,
		})
	}
	return out, "", nil
}

// groupFindings checks one analysis: every template present, then the args.
func groupFindings(c *rules.Context, ro *yaml.RNode, g analysisGroup) []finding.Finding {
	var out []finding.Finding
	var found []*yaml.RNode
	seen := map[string]bool{}
	for _, ref := range g.Refs {
		fs, templates := resolveRef(c, ro, g, ref, seen)
		out = append(out, fs...)
		found = append(found, templates...)
	}
	if len(out) > 0 {
		return out // args cannot be judged without every template
	}
	return argFindings(ro, g, found)
}

// resolveRef finds one referenced template and the templates nested in it.
func resolveRef(c *rules.Context, ro *yaml.RNode, g analysisGroup, ref templateRef, seen map[string]bool) ([]finding.Finding, []*yaml.RNode) {
	if ref.Name == "" {
		return []finding.Finding{manifest.Finding(ruleAnalysisRef, finding.SeverityError, ro, ref.Path, nil,
			"templateName is empty: no %s can be found", ref.kind())}, nil
	}
	var templates []*yaml.RNode
	var missing []string
	walkTemplates(c, manifest.Namespace(ro), ref, "", seen, &templates, &missing)
	var out []finding.Finding
	for _, m := range missing {
		out = append(out, manifest.Finding(ruleAnalysisRef, finding.SeverityError, ro, ref.Path, ref.Name, "%s: %s", m, missingEffect(g)))
	}
	return out, templates
}

// walkTemplates resolves a reference and, depth first, the templates its
// spec.templates nest, each at most once.
func walkTemplates(c *rules.Context, ns string, ref templateRef, via string, seen map[string]bool, found *[]*yaml.RNode, missing *[]string) {
	key := ref.kind() + "/" + ref.Name
	if seen[key] {
		return
	}
	seen[key] = true
	lookupNS := ns
	if ref.Cluster {
		lookupNS = ""
	}
	obj := lookup(c, groupRollouts, ref.kind(), lookupNS, ref.Name)
	if obj == nil {
		*missing = append(*missing, fmt.Sprintf("%s %q%s is not in the render%s", ref.kind(), ref.Name, via, scopeNote(ref, ns)))
		return
	}
	*found = append(*found, obj)
	var nested []templateRefField
	if _, err := decodeAt(obj, "spec.templates", &nested); err != nil {
		*missing = append(*missing, fmt.Sprintf("%s/%s cannot be read: %v", ref.kind(), ref.Name, err))
		return
	}
	for _, n := range nested {
		next := templateRef{Name: n.TemplateName, Cluster: n.ClusterScope == "true"}
		walkTemplates(c, ns, next, fmt.Sprintf(" (nested in %s)", key), seen, found, missing)
	}
}

func scopeNote(ref templateRef, ns string) string {
	switch {
	case ref.Cluster:
		return " (clusterScope: true looks for a ClusterAnalysisTemplate)"
	case ns != "":
		return " in namespace " + ns
	}
	return " in the Rollout's namespace"
}

func missingEffect(g analysisGroup) string {
	if g.Standalone {
		return "the Experiment fails when it starts its analysis"
	}
	if g.Experiment {
		return "the experiment step fails when it runs, and the update aborts"
	}
	return "the controller marks the Rollout InvalidSpec and the update does not progress"
}

// argFindings reports template args that end with no value: no template
// sets value or valueFrom (templates merge as utils/analysis flattenArgs
// does) and the Rollout does not pass them.
func argFindings(ro *yaml.RNode, g analysisGroup, templates []*yaml.RNode) []finding.Finding {
	declared := map[string]string{} // arg → template that declares it
	resolved := map[string]bool{}
	var order []string
	for _, t := range templates {
		var args []analysisArg
		if _, err := decodeAt(t, "spec.args", &args); err != nil {
			return []finding.Finding{unreadable(ruleAnalysisRef, t, "spec.args", err)}
		}
		for _, a := range args {
			if _, ok := declared[a.Name]; !ok {
				declared[a.Name] = manifest.Kind(t) + "/" + manifest.Name(t)
				order = append(order, a.Name)
			}
			resolved[a.Name] = resolved[a.Name] || a.Value != nil || a.ValueFrom != nil
		}
	}
	var out []finding.Finding
	for _, name := range order {
		if resolved[name] || g.Supplied[name] {
			continue
		}
		out = append(out, manifest.Finding(ruleAnalysisRef, finding.SeverityError, ro, g.Path+".args", name,
			"%s declares arg %q with no value or valueFrom, and %s.args does not pass it: the AnalysisRun cannot be created (args.%s was not resolved); %s",
			declared[name], name, g.Path, name, missingEffect(g)))
	}
	return out
}

// misspellTemplate misspells the first templateName the Rollout references.
// misspellAnyTemplate misspells the first template name a Rollout
// references, else one a standalone Experiment's analyses do (a render of
// Experiments alone was "N/A", though the rule checks them).
func misspellAnyTemplate(rs []*yaml.RNode, spec *config.Spec) ([]*yaml.RNode, bool) {
	if out, ok := onRollout(misspellTemplate)(rs, spec); ok {
		return out, true
	}
	for _, ex := range rs {
		if !isKind(ex, groupRollouts, "Experiment") || manifest.IsLocalConfig(ex) {
			continue
		}
		analyses, err := ex.Pipe(yaml.Lookup("spec", "analyses"))
		if err != nil || analyses == nil {
			continue
		}
		if n := firstField(analyses.YNode(), "templateName"); n != nil && n.Value != "" {
			n.Value += "-selftest-typo"
			return rs, true
		}
	}
	return nil, false
}

func misspellTemplate(ro *yaml.RNode) bool {
	strategy, err := ro.Pipe(yaml.Lookup("spec", "strategy"))
	if err != nil || strategy == nil {
		return false
	}
	n := firstField(strategy.YNode(), "templateName")
	if n == nil || n.Value == "" {
		return false
	}
	n.Value += "-selftest-typo"
	return true
}

// firstField finds the value node of the first mapping key named key, depth first.
func firstField(n *yaml.Node, key string) *yaml.Node {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key && n.Content[i+1].Kind == yaml.ScalarNode {
				return n.Content[i+1]
			}
		}
	}
	for _, c := range n.Content {
		if found := firstField(c, key); found != nil {
			return found
		}
	}
	return nil
}
