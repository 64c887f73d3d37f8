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
	// group and namespace, where the entry names them (the synthetic
	// object a jq expression runs on carries them).
	group, namespace string
	// noKind: an Application entry without a kind. everyKind: a kind glob
	// ("*") or argocd-cm's `.all` key — every object of every kind.
	noKind, everyKind bool
	// noKindWhy replaces the Application's reason in the no-kind finding.
	noKindWhy    string
	pointers, jq []string
	managers     []string
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
// Application, an ApplicationSet's template, the argocd-cm ConfigMap or the
// ArgoCD custom resource of argocd-operator, which writes argocd-cm. Other
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
		entries, out = configMapEntries(obj, obj.GetDataMap(), "data[%s]")
	case Is(obj, "ArgoCD"):
		entries, out = operatorEntries(obj)
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
			group: manifest.Str(n, "group"), namespace: manifest.Str(n, "namespace"),
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
// and .all keys, and the older resource.customizations key, from data (the
// ConfigMap's data, or the keys an ArgoCD resource adds to it); fieldFormat
// names a key's field. A value that does not parse is a finding: the gate
// cannot vouch for it.
func configMapEntries(cm *yaml.RNode, data map[string]string, fieldFormat string) ([]ignoreEntry, []finding.Finding) {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var entries []ignoreEntry
	var bad []finding.Finding
	for _, k := range keys {
		field := fmt.Sprintf(fieldFormat, k)
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
	kind, group := groupKind, ""
	if i := strings.LastIndex(groupKind, "_"); i >= 0 {
		kind, group = groupKind[i+1:], groupKind[:i]
	}
	e := customizationEntry(n, field, kind, groupKind == "all" || strings.Contains(kind, "*"))
	e.group = group
	return e, nil
}

// operatorEntries reads what the ArgoCD resource of argocd-operator
// (argoproj.io/v1beta1 and v1alpha1) writes into argocd-cm:
// spec.resourceIgnoreDifferences (all → the .all key; each
// resourceIdentifiers entry → the <group>_<kind> key, its customization the
// value), v1alpha1's spec.resourceCustomizations (the older
// resource.customizations string) and spec.extraConfig, whose keys the
// operator copies into argocd-cm as they are.
func operatorEntries(cr *yaml.RNode) ([]ignoreEntry, []finding.Finding) {
	var entries []ignoreEntry
	var bad []finding.Finding
	if all, _ := cr.Pipe(yaml.Lookup("spec", "resourceIgnoreDifferences", "all")); all != nil {
		entries = append(entries, customizationEntry(all, "spec.resourceIgnoreDifferences.all", "", true))
	}
	if ids, _ := cr.Pipe(yaml.Lookup("spec", "resourceIgnoreDifferences", "resourceIdentifiers")); ids != nil {
		elems, _ := ids.Elements()
		for i, n := range elems {
			field := fmt.Sprintf("spec.resourceIgnoreDifferences.resourceIdentifiers[%d]", i)
			kind := manifest.Str(n, "kind")
			var c *yaml.RNode
			if f := n.Field("customization"); f != nil {
				c = f.Value
			}
			e := customizationEntry(c, field+".customization", kind, strings.Contains(kind, "*"))
			e.group = manifest.Str(n, "group")
			if kind == "" {
				e.noKind, e.field = true, field
				e.noKindWhy = "the operator writes it as the argocd-cm key resource.customizations.ignoreDifferences." + groupPrefix(manifest.Str(n, "group")) + ", and Argo CD matches no object by an empty kind"
			}
			entries = append(entries, e)
		}
	}
	if legacy := manifest.Str(cr, "spec.resourceCustomizations"); legacy != "" {
		es, err := legacyEntries(legacy, "spec.resourceCustomizations")
		if err != nil {
			bad = append(bad, manifest.Finding(IgnoreRule, finding.SeverityError, cr, "spec.resourceCustomizations", nil, "does not parse: %v", err))
		}
		entries = append(entries, es...)
	}
	if extra, _ := cr.Pipe(yaml.Lookup("spec", "extraConfig")); extra != nil {
		data := map[string]string{}
		_ = extra.VisitFields(func(f *yaml.MapNode) error {
			data[yaml.GetValue(f.Key)] = yaml.GetValue(f.Value)
			return nil
		})
		es, b := configMapEntries(cr, data, "spec.extraConfig[%s]")
		entries, bad = append(entries, es...), append(bad, b...)
	}
	return entries, bad
}

// customizationEntry reads an ignoreDifferences customization map (jsonPointers,
// jqPathExpressions, managedFieldsManagers) sitting at field.
func customizationEntry(n *yaml.RNode, field, kind string, everyKind bool) ignoreEntry {
	e := ignoreEntry{field: field, kind: kind, everyKind: everyKind}
	if n == nil || n.YNode().Kind != yaml.MappingNode {
		return e
	}
	e.pointers, e.jq, e.managers = strings2(n, "jsonPointers"), strings2(n, "jqPathExpressions"), strings2(n, "managedFieldsManagers")
	return e
}

func groupPrefix(group string) string {
	if group == "" {
		return ""
	}
	return group + "_"
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
		why := e.noKindWhy
		if why == "" {
			why = "the Application CRD requires one, and Argo CD matches no object by an empty kind"
		}
		out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, e.field+".kind", nil,
			"an ignoreDifferences entry without a kind: %s; name the kind (and the object) whose field may drift", why))
	}
	broad := e.name == "" || e.everyKind
	judge := func(field, path string, p fieldPath) {
		switch {
		case p.whole():
			out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, field, path,
				"hides %s on %s: that is the whole object (or all it runs), so any change to it, by hand or by a bad merge, syncs green and never shows as drift", path, e.scope()))
		case p.controllerOwned():
			// /status and its children: written by the controller, not applied.
		case broad && !p.allowed(allowed):
			out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, field, path,
				"hides %s on %s, and that path is not in the allow-list (%s): name the object, or add the path to spec.argocd.ignoreDifferencesAllowed", path, e.scope(), strings.Join(allowed, ", ")))
		}
	}
	for i, p := range e.pointers {
		judge(fmt.Sprintf("%s.jsonPointers[%d]", e.field, i), p, parsePointer(p))
	}
	for i, q := range e.jq {
		field := fmt.Sprintf("%s.jqPathExpressions[%d]", e.field, i)
		p := parseJQ(q)
		if p.whole() {
			judge(field, q, p)
			continue
		}
		v := judgeJQ(q, e)
		switch {
		case v.parseErr != nil:
			out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, field, q,
				"Argo CD cannot read this jqPathExpression as del(%s): %v; it refuses the diff settings, so the Application's comparison fails (ComparisonError) instead of ignoring a field", q, firstLine(v.parseErr)))
		case v.hides != "":
			out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, field, q,
				"hides %s on %s: Argo CD runs del(%s) on both sides of the diff, and that removes %s from an object of this kind, so any change to it, by hand or by a bad merge, syncs green and never shows as drift", v.hides, e.scope(), q, v.hides))
		case p.ok:
			// A plain path: the static reading decides (an error on the
			// synthetic object, a missing list, is no doubt about what it names).
			judge(field, q, p)
		case broad && !p.allowed(allowed):
			judge(field, q, p)
		case v.undecided != "":
			out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, field, q,
				"the gate cannot tell what %s hides on %s: %s; write a plain path (.spec.replicas, .webhooks[]?.clientConfig.caBundle) or a select over one", q, e.scope(), v.undecided))
		}
	}
	for i, m := range e.managers {
		if humanManager(m) {
			out = append(out, manifest.Finding(IgnoreRule, finding.SeverityError, obj, fmt.Sprintf("%s.managedFieldsManagers[%d]", e.field, i), m,
				"trusts the field manager %q on %s: a person's %s is taken as desired state and never shows as drift", m, e.scope(), strings.ReplaceAll(m, "-", " ")))
		}
	}
	return out
}

// firstLine is the first line of err's message (gojq's parse errors carry
// no newline, but a message is kept to one line either way).
func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
