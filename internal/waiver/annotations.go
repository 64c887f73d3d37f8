package waiver

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-gate/kubectl-gate/internal/finding"
	"github.com/kubectl-gate/kubectl-gate/internal/yamlpath"
)

// applyAnnotations applies each object's waiver annotation to the findings
// about that object and returns the annotations' audit findings. Without
// spec.exceptionsFromAnnotations every annotation is ignored, and said so.
func applyAnnotations(fs []finding.Finding, sc Scope, now time.Time) []finding.Finding {
	var out []finding.Finding
	for _, obj := range sc.Resources {
		value, ok := yamlpath.LookupAnnotation(obj.YNode(), Annotation) // no map per object: this runs over every object of a render
		if !ok {
			continue
		}
		ref := &finding.ResourceRef{APIVersion: obj.GetApiVersion(), Kind: obj.GetKind(), Name: obj.GetName(), Namespace: obj.GetNamespace()}
		audit := func(rule string, sev finding.Severity, msg string) {
			out = append(out, finding.Finding{Rule: rule, Severity: sev, ResourceRef: ref,
				Field: &finding.Field{Path: "metadata.annotations." + Annotation, CurrentValue: value}, Message: msg})
		}
		if !sc.Config.ExceptionsFromAnnotations {
			audit(RuleIgnored, finding.SeverityWarning, fmt.Sprintf("%s ignored: the trusted config does not set spec.exceptionsFromAnnotations: true", Annotation))
			continue
		}
		e, err := ParseAnnotation(value)
		switch {
		case err != nil:
			audit(RuleInvalid, finding.SeverityError, fmt.Sprintf("%s waives nothing: %v", Annotation, err))
			continue
		case expired(e, now):
			audit(RuleExpired, finding.SeverityError, fmt.Sprintf("%s of %s (owner %s) expired on %s and waives nothing: renew it or remove it", Annotation, strings.Join(e.Rules, ","), e.Owner, e.Expires))
			continue
		}
		used := false
		source := fmt.Sprintf("annotation %s on %s", Annotation, ref)
		n := &notes{seen: map[string]bool{}}
		for i := range fs {
			f := &fs[i]
			if f.Suppressed != nil || f.Severity == finding.SeverityInfo || !sameObject(f.ResourceRef, ref) || !contains(e.Rules, f.Rule) {
				continue
			}
			used = true
			if !waivable(*f, sc) {
				n.unwaivable("", source, *f)
				continue
			}
			f.Suppressed = &finding.Suppression{Kind: finding.SuppressedByAnnotation, Reason: e.Reason, Owner: e.Owner, Expires: e.Expires, Source: source}
		}
		out = append(out, n.out...)
		if !used {
			audit(RuleUnused, finding.SeverityWarning, fmt.Sprintf("%s of %s (owner %s) waived nothing in this run: remove it", Annotation, strings.Join(e.Rules, ","), e.Owner))
		}
	}
	return out
}

func sameObject(a, b *finding.ResourceRef) bool {
	return a != nil && a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
