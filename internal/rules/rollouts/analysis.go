package rollouts

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// rolloutAnalysis is a RolloutAnalysis: templates run together, with args.
type rolloutAnalysis struct {
	Templates []templateRefField `yaml:"templates"`
	Args      []analysisArg      `yaml:"args"`
}

type templateRefField struct {
	TemplateName string `yaml:"templateName"`
	ClusterScope scalar `yaml:"clusterScope"`
}

// experimentAnalysis is one entry of an experiment step's analyses.
type experimentAnalysis struct {
	TemplateName string        `yaml:"templateName"`
	ClusterScope scalar        `yaml:"clusterScope"`
	Args         []analysisArg `yaml:"args"`
}

// analysisArg is an arg of a template or of a Rollout's analysis.
type analysisArg struct {
	Name      string     `yaml:"name"`
	Value     *scalar    `yaml:"value"`
	ValueFrom *yaml.Node `yaml:"valueFrom"`
}

// analysisGroup is one AnalysisRun the controller creates: the templates it
// merges and the args the Rollout passes.
type analysisGroup struct {
	Path     string // e.g. spec.strategy.canary.steps[1].analysis
	Refs     []templateRef
	Supplied map[string]bool
	// Experiment is set for experiment analyses (run by the Experiment);
	// Standalone for those of an Experiment object of the render.
	Experiment, Standalone bool
}

type templateRef struct {
	Path, Name string
	Cluster    bool
}

func (r templateRef) kind() string {
	if r.Cluster {
		return "ClusterAnalysisTemplate"
	}
	return "AnalysisTemplate"
}

// analysisGroups collects every analysis a Rollout references: canary steps
// (inline analysis and experiment analyses), background analysis, and
// blue/green pre- and post-promotion analysis.
func analysisGroups(ro *yaml.RNode) ([]analysisGroup, string, error) {
	var out []analysisGroup
	if hasStrategy(ro, "canary") {
		var canary struct {
			Steps    []canaryStep     `yaml:"steps"`
			Analysis *rolloutAnalysis `yaml:"analysis"`
		}
		if _, err := decodeAt(ro, "spec.strategy.canary", &canary); err != nil {
			return nil, "spec.strategy.canary", err
		}
		for i, s := range canary.Steps {
			out = append(out, stepGroups(fmt.Sprintf("%s[%d]", stepsPath, i), s)...)
		}
		out = appendGroup(out, "spec.strategy.canary.analysis", canary.Analysis)
	}
	if hasStrategy(ro, "blueGreen") {
		var bg struct {
			Pre  *rolloutAnalysis `yaml:"prePromotionAnalysis"`
			Post *rolloutAnalysis `yaml:"postPromotionAnalysis"`
		}
		if _, err := decodeAt(ro, "spec.strategy.blueGreen", &bg); err != nil {
			return nil, "spec.strategy.blueGreen", err
		}
		out = appendGroup(out, "spec.strategy.blueGreen.prePromotionAnalysis", bg.Pre)
		out = appendGroup(out, "spec.strategy.blueGreen.postPromotionAnalysis", bg.Post)
	}
	return out, "", nil
}

// stepGroups returns the analyses of one canary step.
func stepGroups(path string, s canaryStep) []analysisGroup {
	out := appendGroup(nil, path+".analysis", s.Analysis)
	if s.Experiment == nil {
		return out
	}
	for j, a := range s.Experiment.Analyses {
		p := fmt.Sprintf("%s.experiment.analyses[%d]", path, j)
		out = append(out, analysisGroup{
			Path:       p,
			Refs:       []templateRef{{Path: p + ".templateName", Name: a.TemplateName, Cluster: a.ClusterScope == "true"}},
			Supplied:   supplied(a.Args),
			Experiment: true,
		})
	}
	return out
}

func appendGroup(out []analysisGroup, path string, a *rolloutAnalysis) []analysisGroup {
	if a == nil {
		return out
	}
	g := analysisGroup{Path: path, Supplied: supplied(a.Args)}
	for j, t := range a.Templates {
		g.Refs = append(g.Refs, templateRef{Path: fmt.Sprintf("%s.templates[%d]", path, j), Name: t.TemplateName, Cluster: t.ClusterScope == "true"})
	}
	return append(out, g)
}

// supplied names the args a Rollout passes. Any arg the Rollout lists
// counts, even `value: ""`: the controller sets every listed arg.
func supplied(args []analysisArg) map[string]bool {
	m := map[string]bool{}
	for _, a := range args {
		m[a.Name] = true
	}
	return m
}
