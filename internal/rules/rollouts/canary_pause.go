package rollouts

import (
	"fmt"
	"strconv"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// CanaryPause fires on a canary that raises its weight with nothing judging it.
var CanaryPause = rules.Rule{
	ID: "rollout-canary-pause", Default: finding.SeverityError, Family: "rollouts",
	Doc:      "a canary setWeight below 100 has no pause (any duration but 0), analysis or experiment step before the next setWeight or the end of the steps; or the canary has no steps, or no such step at all",
	Outage:   "setWeight: 10 → setWeight: 100 is a slow full rollout: a bad version reaches every user before anyone or anything looks at it",
	Fix:      "add a pause (with a duration, or none to wait for a human), an analysis or an experiment step after each setWeight below 100",
	Mutation: "remove the pause, analysis and experiment steps of a canary",
	Follows:  follows,
	Reads:    reads,
	Check:    checkCanaryPause,
	Mutants: []rules.Mutant{
		{Name: "remove the pause, analysis and experiment steps", Apply: rules.OnResources(onCanary(removeJudgmentSteps))},
		{Name: "make the steps setWeight: 10 → setWeight: 100", Apply: rules.OnResources(onCanary(jumpToFull))},
	},
}

// canaryStep is one entry of spec.strategy.canary.steps, with the fields
// the rules read.
type canaryStep struct {
	SetWeight  *scalar          `yaml:"setWeight"`
	Pause      *pauseStep       `yaml:"pause"`
	Analysis   *rolloutAnalysis `yaml:"analysis"`
	Experiment *experimentStep  `yaml:"experiment"`
}

type pauseStep struct {
	Duration *scalar `yaml:"duration"`
}

type experimentStep struct {
	Duration scalar               `yaml:"duration"`
	Analyses []experimentAnalysis `yaml:"analyses"`
}

const stepsPath = "spec.strategy.canary.steps"

// checkCanaryPause walks each canary's steps: a partial weight must meet a
// judgment point before the next setWeight or the end of the steps.
func checkCanaryPause(c *rules.Context) []finding.Finding {
	var out []finding.Finding
	for _, ro := range rollouts(c) {
		if !hasStrategy(ro, "canary") {
			continue
		}
		var canary struct {
			Steps          []canaryStep `yaml:"steps"`
			TrafficRouting struct {
				MaxTrafficWeight scalar `yaml:"maxTrafficWeight"`
			} `yaml:"trafficRouting"`
		}
		if _, err := decodeAt(ro, "spec.strategy.canary", &canary); err != nil {
			out = append(out, unreadable("rollout-canary-pause", ro, stepsPath, err))
			continue
		}
		out = append(out, pauseFindings(ro, canary.Steps, fullWeight(canary.TrafficRouting.MaxTrafficWeight))...)
	}
	return out
}

// fullWeight is the weight that sends all traffic to the canary: 100, or
// trafficRouting.maxTrafficWeight (nginx and plugins).
func fullWeight(max scalar) int {
	if w, err := strconv.Atoi(string(max)); err == nil && w > 0 {
		return w
	}
	return 100
}

// pauseFindings judges one canary's steps.
func pauseFindings(ro *yaml.RNode, steps []canaryStep, full int) []finding.Finding {
	if len(steps) == 0 {
		return []finding.Finding{pauseFinding(ro, "spec.strategy.canary", nil,
			"the canary has no steps: every update goes straight to 100%% like a rolling update, with no point to stop it")}
	}
	var out []finding.Finding
	pending, judged := -1, false
	for i, s := range steps {
		if s.SetWeight != nil {
			if pending >= 0 {
				out = append(out, partialWeight(ro, steps, pending, fmt.Sprintf("the next setWeight (steps[%d])", i)))
			}
			pending = -1
			if w, err := strconv.Atoi(string(*s.SetWeight)); err != nil || w < full {
				pending = i
			}
		}
		if judgmentPoint(s) {
			pending, judged = -1, true
		}
	}
	if pending >= 0 {
		out = append(out, partialWeight(ro, steps, pending, "the end of the steps (the controller then goes to 100%)"))
	}
	if !judged && len(out) == 0 {
		out = append(out, pauseFinding(ro, stepsPath, nil,
			"none of the %d steps is a pause, analysis or experiment: the update goes to 100%% with no point to stop it", len(steps)))
	}
	return out
}

func partialWeight(ro *yaml.RNode, steps []canaryStep, i int, until string) finding.Finding {
	w := string(*steps[i].SetWeight)
	return pauseFinding(ro, fmt.Sprintf("%s[%d]", stepsPath, i), w,
		"setWeight %s is not followed by a pause, analysis or experiment step before %s: this is a slow full rollout, not a canary", w, until)
}

func pauseFinding(ro *yaml.RNode, path string, current any, format string, args ...any) finding.Finding {
	return manifest.Finding("rollout-canary-pause", finding.SeverityError, ro, path, current, format, args...)
}

// judgmentPoint reports whether the Rollout waits at a step for a person or
// a check: a pause (indefinite or timed, not zero), an inline analysis, or
// an experiment (it completes only when its analyses pass, its duration
// passes, or, with neither, when someone ends it). setCanaryScale,
// setHeaderRoute and setMirrorRoute complete at once.
func judgmentPoint(s canaryStep) bool {
	switch {
	case s.Pause != nil:
		return s.Pause.Duration == nil || durationSeconds(string(*s.Pause.Duration)) > 0
	case s.Analysis != nil, s.Experiment != nil:
		return true
	}
	return false
}

// durationSeconds reads a pause duration as the controller does: a bare
// number is seconds, else a Go duration; -1 when it is invalid.
func durationSeconds(s string) int64 {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return n
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return -1
	}
	return int64(d.Seconds())
}

// hasStrategy reports whether spec.strategy holds the given key.
func hasStrategy(ro *yaml.RNode, key string) bool {
	n := yamlpath.Get(ro.YNode(), "spec", "strategy", key)
	return n != nil && n.Tag != yaml.NodeTagNull
}

// removeJudgmentSteps drops every pause, analysis and experiment step.
func removeJudgmentSteps(canary *yaml.RNode) bool {
	steps, err := canary.Pipe(yaml.Lookup("steps"))
	if err != nil || steps == nil || steps.YNode().Kind != yaml.SequenceNode {
		return false
	}
	var kept []*yaml.Node
	for _, s := range steps.YNode().Content {
		st := yaml.NewRNode(s)
		if st.Field("pause") == nil && st.Field("analysis") == nil && st.Field("experiment") == nil {
			kept = append(kept, s)
		}
	}
	removed := len(kept) < len(steps.YNode().Content)
	steps.YNode().Content = kept
	return removed
}

// jumpToFull replaces the steps with a 10% step straight to 100%.
func jumpToFull(canary *yaml.RNode) bool {
	steps, err := yaml.Parse("- setWeight: 10\n- setWeight: 100\n")
	return err == nil && canary.PipeE(yaml.SetField("steps", steps)) == nil
}
