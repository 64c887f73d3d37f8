package argo

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/config"
	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/manifest"
)

// IgnoreRule is the id of the rule whose findings IgnoreDifferences makes.
const IgnoreRule = "argocd-ignore-differences"

// ignoreEntry is one ignoreDifferences entry, from an Application, an
// ApplicationSet template or an argocd-cm key.
type ignoreEntry struct {
	field      string // where it sits, for findings
	kind, name string
	// noKind: an Application entry without a kind. everyKind: a kind glob
	// ("*") or argocd-cm's `.all` key — every object of every kind.
	noKind, everyKind bool
	pointers, jq      []string
	managers          []string
}

// scope says which objects the entry covers, for messages.
func (e ignoreEntry) scope() string {
	switch {
	case e.noKind:
		return "an entry without a kind"
	case e.everyKind && e.name == "":
		return "every object of every kind"
	case e.everyKind:
		return "every object named " + e.name
	case e.name == "":
		return "every " + e.kind + " (no name)"
	}
	return e.kind + "/" + e.name
}

// IgnoreDifferences checks the ignoreDifferences entries of one object: an
// Application, an ApplicationSet's template or the argocd-cm ConfigMap. Other
// objects give nothing. `kubectl gate status` runs it on the live Application.
func IgnoreDifferences(obj *yaml.RNode, cfg *config.Spec) []finding.Finding {
	allowed := DefaultIgnoreDifferencesAllowed
	if cfg != nil && len(cfg.ArgoCD.IgnoreDifferencesAllowed) > 0 {
		allowed = cfg.ArgoCD.IgnoreDifferencesAllowed
	}
	var entries []ignoreEntry
	var out []finding.Finding
	switch {
	case IsApplication(obj):
		entries = specEntries(obj, "spec.ignoreDifferences")
	case Is(obj, "ApplicationSet"):
		entries = specEntries(obj, "spec.template.spec.ignoreDifferences")
	case manifest.Kind(obj) == "ConfigMap" && manifest.Name(obj) == "argocd-cm":
		entries, out = configMapEntries(obj)
	}
	for _, e := range entries {
		out = append(out, e.check(obj, allowed)...)
	}
	return out
}

// specEntries reads the entries of an Application-shaped ignoreDifferences list.
func specEntries(obj *yaml.RNode, path string) []ignoreEntry {
	list, err := obj.Pipe(yaml.Lookup(strings.Split(path, ".")...))
	if err != nil || list == nil {
		return nil
	}
	elems, _ := list.Elements()
	out := make([]ignoreEntry, 0, len(elems))
	for i, n := range elems {
		kind := manifest.Str(n, "kind")
		out = append(out, ignoreEntry{
			field: fmt.Sprintf("%s[%d]", path, i), kind: kind, name: manifest.Str(n, "name"),
			noKind: kind == "", everyKind: strings.Contains(kind, "*"),
			pointers: strings2(n, "jsonPointers"), jq: strings2(n, "jqPathExpressions"),
			managers: strings2(n, "managedFieldsManagers"),
		})
	}
	return out
}

func strings2(n *yaml.RNode, field string) []string {
	f := n.Field(field)
	if f == nil {
		return nil
	}
	var out []string
	_ = f.Value.VisitElements(func(e *yaml.RNode) error {
		out = append(out, yaml.GetValue(e))
		return nil
	})
	return out
}

const cmPrefix = "resource.customizations.ignoreDifferences."

// configMapEntries reads argocd-cm's resource.customizations.ignoreDifferences.<group_kind>
// and .all keys, and the older resource.customizations key. A value that
// does not parse is a finding: the gate cannot vouch for it.
func configMapEntries(cm *yaml.RNode) ([]ignoreEntry, []finding.Finding) {
	data := cm.GetDataMap()
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var entries []ignoreEntry
	var bad []finding.Finding
	for _, k := range keys {
		field := fmt.Sprintf("data[%s]", k)
		switch {
		case strings.HasPrefix(k, cmPrefix):
			e, err := cmEntry(data[k], field, strings.TrimPrefix(k, cmPrefix))
			if err != nil {
				bad = append(bad, manifest.Finding(IgnoreRule, finding.SeverityError, cm, field, nil, "does not parse: %v", err))
				continue
			}
			entries = append(entries, e)
		case k == "resource.customizations":
			es, err := legacyEntries(data[k], field)
			if err != nil {
				bad = append(bad, manifest.Finding(IgnoreRule, finding.SeverityError, cm, field, nil, "does not parse: %v", err))
			}
			entries = append(entries, es...)
		}
	}
	return entries, bad
}

// cmEntry reads one ignoreDifferences value; groupKind is "apps_Deployment",
// "Service" (core) or "all".
func cmEntry(value, field, groupKind string) (ignoreEntry, error) {
	n, err := yaml.Parse(value)
	if err != nil {
		return ignoreEntry{}, err
	}
	kind := groupKind
	if i := strings.LastIndex(groupKind, "_"); i >= 0 {
		kind = groupKind[i+1:]
	}
	return ignoreEntry{
		field: field, kind: kind, everyKind: groupKind == "all" || strings.Contains(kind, "*"),
		pointers: strings2(n, "jsonPointers"), jq: strings2(n, "jqPathExpressions"),
		managers: strings2(n, "managedFieldsManagers"),
	}, nil
}

// legacyEntries reads the pre-2.x form: resource.customizations holding
// "group/Kind": {ignoreDifferences: "<yaml>"}.
func legacyEntries(value, field string) ([]ignoreEntry, error) {
	n, err := yaml.Parse(value)
	if err != nil {
		return nil, err
	}
	var out []ignoreEntry
	err = n.VisitFields(func(f *yaml.MapNode) error {
		gk := yaml.GetValue(f.Key)
		v := f.Value.Field("ignoreDifferences")
		if v == nil {
			return nil
		}
		e, err := cmEntry(yaml.GetValue(v.Value), fmt.Sprintf("%s.%s.ignoreDifferences", field, gk), strings.ReplaceAll(gk, "/", "_"))
		out = append(out, e)
		return err
	})
	return out, err
}

// check judges one entry.
func (e ignoreEntry) check(obj *yaml.RNode, allowed []string) []finding.Finding {
	var out []finding.Finding
	if e.noKind {
		out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, e.field+".kind", nil,
			"an ignoreDifferences entry without a kind: the Application CRD requires one, and Argo CD matches no object by an empty kind; name the kind (and the object) whose field may drift"))
	}
	broad := e.name == "" || e.everyKind
	judge := func(field, path string, p fieldPath) {
		switch {
		case p.whole():
			out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, field, path,
				"hides %s on %s: that is the whole object (or all it runs), so any change to it, by hand or by a bad merge, syncs green and never shows as drift", path, e.scope()))
		case broad && !p.allowed(allowed):
			out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, field, path,
				"hides %s on %s, and that path is not in the allow-list (%s): name the object, or add the path to spec.argocd.ignoreDifferencesAllowed", path, e.scope(), strings.Join(allowed, ", ")))
		}
	}
	for i, p := range e.pointers {
		judge(fmt.Sprintf("%s.jsonPointers[%d]", e.field, i), p, parsePointer(p))
	}
	for i, q := range e.jq {
		judge(fmt.Sprintf("%s.jqPathExpressions[%d]", e.field, i), q, parseJQ(q))
	}
	for i, m := range e.managers {
		if humanManager(m) {
			out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, fmt.Sprintf("%s.managedFieldsManagers[%d]", e.field, i), m,
				"trusts the field manager %q on %s: a person's %s is taken as desired state and never shows as drift", m, e.scope(), strings.ReplaceAll(m, "-", " ")))
		}
	}
	return out
}
