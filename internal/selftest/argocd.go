package selftest

import (
	"context"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/gate"
	"github.com/kubectl-gate/kubectl-gate/internal/rules"
)

// argocdMutants break Argo CD Applications so the argocd rules must fire.
// The ones that need the renders of the Applications' sources are
// appMutants, run by RunApps.
var argocdMutants = []Mutant{
	{Rule: "argocd-ignore-differences", Name: "widen an ignoreDifferences pointer to /spec", Apply: widenIgnoreDifferences},
}

// AppMutant is a Mutant that also sees and may change the renders of the
// Applications' sources (gate.Options.Apps), which Mutant.Apply cannot
// reach: an empty source is a change to a render, not to the input.
type AppMutant struct {
	Rule  string
	Name  string
	Apply func(resources []*yaml.RNode, apps []rules.AppSource) ([]*yaml.RNode, []rules.AppSource, bool)
}

// appRules are the rules RunApps covers.
var appRules = []string{"argocd-destination-namespace", "argocd-source-empty"}

var appMutants = []AppMutant{
	{Rule: "argocd-destination-namespace", Name: "change the destination namespace", Apply: moveDestination},
	{Rule: "argocd-source-empty", Name: "empty an Application's source", Apply: emptySource},
}

// RunApps runs the AppMutants of enabled rules on a render whose baseline
// passed (Run); without Applications their rows are "n/a".
func RunApps(ctx context.Context, resources []*yaml.RNode, opts gate.Options, deps gate.Deps, failOnWarning bool) ([]Row, error) {
	var rows []Row
	for _, am := range appMutants {
		if opts.Config.Rules[am.Rule] == "off" {
			continue
		}
		apps := append([]rules.AppSource(nil), opts.Apps...)
		mutated, mApps, ok := am.Apply(copyAll(resources), apps)
		m := Mutant{Rule: am.Rule, Name: am.Name, Apply: func([]*yaml.RNode, *config.Spec) ([]*yaml.RNode, bool) {
			return mutated, ok
		}}
		o := opts
		o.Apps = mApps
		row, err := runMutant(ctx, m, resources, o, deps, failOnWarning)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// rendered calls fn with each Application of the input and each render of
// its sources that the argocd rules judge, until fn returns true.
func rendered(resources []*yaml.RNode, apps []rules.AppSource, fn func(app *yaml.RNode, i int) bool) bool {
	for _, app := range resources {
		if !rules.IsApplication(app) {
			continue
		}
		for _, src := range rules.ArgoSources(app) {
			for i, a := range apps {
				same := a.App.GetName() == app.GetName() && a.App.GetNamespace() == app.GetNamespace()
				if same && a.Index == src.Index && a.Err == nil && a.Skipped == "" && fn(app, i) {
					return true
				}
			}
		}
	}
	return false
}

// moveDestination points an Application at another namespace than its
// source renders into; when its objects set no namespace (they follow the
// destination), it removes the destination namespace instead.
func moveDestination(rs []*yaml.RNode, apps []rules.AppSource) ([]*yaml.RNode, []rules.AppSource, bool) {
	ok := rendered(rs, apps, func(app *yaml.RNode, i int) bool {
		explicit, bare := false, false
		for _, obj := range apps[i].Resources {
			if rules.Namespaced(obj, apps[i].Resources) {
				explicit = explicit || obj.GetNamespace() != ""
				bare = bare || obj.GetNamespace() == ""
			}
		}
		switch {
		case explicit:
			return setDestination(app, "gate-selftest-elsewhere")
		case bare:
			return setDestination(app, "")
		}
		return false
	})
	return rs, apps, ok
}

func setDestination(app *yaml.RNode, ns string) bool {
	dest, err := app.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec", "destination"))
	if err != nil {
		return false
	}
	if ns == "" {
		return dest.PipeE(yaml.Clear("namespace")) == nil
	}
	return dest.PipeE(yaml.SetField("namespace", yaml.NewStringRNode(ns))) == nil
}

// emptySource replaces the render of the first source that renders
// something with an empty render.
func emptySource(rs []*yaml.RNode, apps []rules.AppSource) ([]*yaml.RNode, []rules.AppSource, bool) {
	ok := rendered(rs, apps, func(_ *yaml.RNode, i int) bool {
		if gate.Count(apps[i].Resources) == 0 {
			return false
		}
		apps[i].Resources = []*yaml.RNode{}
		return true
	})
	return rs, apps, ok
}

// widenIgnoreDifferences sets the first JSON pointer of an Application's
// ignoreDifferences to /spec, or adds such an entry; else it widens the
// first ignoreDifferences key of argocd-cm.
func widenIgnoreDifferences(rs []*yaml.RNode, _ *config.Spec) ([]*yaml.RNode, bool) {
	for _, r := range rs {
		if rules.IsApplication(r) {
			return rs, widenApp(r) == nil
		}
	}
	for _, r := range rs {
		if r.GetKind() == "ConfigMap" && r.GetName() == "argocd-cm" && widenConfigMap(r) {
			return rs, true
		}
	}
	return nil, false
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
