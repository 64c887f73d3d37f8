package live

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Problem is one reason a live object is not healthy (rule live-health).
type Problem struct {
	// Path is the status field that shows it, e.g. "status.phase" or
	// "status.conditions[Ready]".
	Path string
	// Value is that field's value.
	Value any
	// Message says what is wrong, in words.
	Message string
	// Settling is true when the controller has not caught up yet (Argo CD
	// calls this Progressing) rather than rejected the object. The gate
	// still fails it: a deploy that has not settled is not proven good.
	Settling bool
}

// Known controller-managed kinds: their controllers always write a status,
// so an object of one of them without any status was never reconciled (no
// controller running, or it has not got there yet).
var reconciledKinds = map[string]bool{
	"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true, "apps/ReplicaSet": true,
	"argoproj.io/Rollout": true, "cert-manager.io/Certificate": true, "external-secrets.io/ExternalSecret": true,
}

// Health judges a live object from its status, never from its existence
// (the live-health rule). It is a pure function: no cluster is needed.
// It returns nil for a healthy object.
func Health(obj *unstructured.Unstructured) []Problem {
	gk := obj.GroupVersionKind().GroupKind()
	key := gk.Group + "/" + gk.Kind
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	if len(status) == 0 {
		if reconciledKinds[key] {
			return []Problem{{Path: "status", Settling: true,
				Message: "has no status: its controller never reconciled it (is the " + gk.Kind + " controller running?)"}}
		}
		return nil
	}
	var out []Problem
	if key == "argoproj.io/Rollout" {
		out = append(out, rolloutProblems(obj, status)...)
	}
	out = append(out, conditionProblems(key, status)...)
	if p, ok := generationLag(obj, status); ok {
		out = append(out, p)
	}
	return out
}

// rolloutProblems judges an Argo Rollout: phase Degraded, an InvalidSpec
// condition, an abort, or a workloadRef Deployment change not yet observed.
func rolloutProblems(obj *unstructured.Unstructured, status map[string]any) []Problem {
	var out []Problem
	if phase, _ := status["phase"].(string); phase == "Degraded" {
		msg, _ := status["message"].(string)
		out = append(out, Problem{Path: "status.phase", Value: phase, Message: "the Rollout is Degraded" + suffix(msg)})
	}
	aborted := status["abort"] == true
	for _, c := range conditions(status) {
		switch {
		case c.Type == "InvalidSpec" && c.Status != "False":
			out = append(out, Problem{Path: "status.conditions[InvalidSpec]", Value: c.Status, Message: "the Rollout controller rejected the spec" + suffix(c.Message)})
		case c.Type == "Progressing" && c.Reason == "RolloutAborted":
			aborted = true
		}
	}
	if aborted {
		out = append(out, Problem{Path: "status.abort", Value: true, Message: "the Rollout is aborted: traffic went back to the stable version and the new one is not running"})
	}
	annotated, ok1 := number(obj.GetAnnotations()["rollout.argoproj.io/workload-generation"])
	observed, ok2 := number(status["workloadObservedGeneration"])
	_, ref, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "workloadRef")
	if ref && ok1 && ok2 && observed != annotated {
		out = append(out, Problem{Path: "status.workloadObservedGeneration", Value: observed, Settling: true,
			Message: fmt.Sprintf("the referenced workload is at generation %d but the Rollout controller observed %d: the change has not rolled out", annotated, observed)})
	}
	return out
}

// conditionProblems judges the conditions every kind shares: Ready or
// Available False, and Progressing False with ProgressDeadlineExceeded.
func conditionProblems(key string, status map[string]any) []Problem {
	cs := conditions(status)
	issuing := key == "cert-manager.io/Certificate" && hasCondition(cs, "Issuing", "True")
	var out []Problem
	for _, c := range cs {
		path := "status.conditions[" + c.Type + "]"
		switch {
		case (c.Type == "Ready" || c.Type == "Available") && c.Status == "False":
			out = append(out, Problem{Path: path, Value: c.Status, Settling: issuing,
				Message: c.Type + "=False" + reason(c)})
		case c.Type == "Progressing" && c.Status == "False" && c.Reason == "ProgressDeadlineExceeded":
			out = append(out, Problem{Path: path, Value: c.Reason,
				Message: "progress deadline exceeded: the rollout is stuck" + suffix(c.Message)})
		}
	}
	return out
}

// generationLag reports status.observedGeneration < metadata.generation.
// A non-numeric observedGeneration (Argo Rollouts before v0.10 stored a
// hash there) or one above generation says nothing and is ignored, as Argo
// CD does.
func generationLag(obj *unstructured.Unstructured, status map[string]any) (Problem, bool) {
	observed, ok := number(status["observedGeneration"])
	gen, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "generation")
	g, _ := number(gen)
	if !ok || g == 0 || observed >= g {
		return Problem{}, false
	}
	return Problem{Path: "status.observedGeneration", Value: observed, Settling: true,
		Message: fmt.Sprintf("generation %d is not observed yet (observedGeneration %d): the controller has not acted on the applied spec", g, observed)}, true
}

// condition is one entry of status.conditions.
type condition struct {
	Type, Status, Reason, Message string
}

// conditions reads status.conditions; anything but a list of maps is
// ignored (one Argo CD fixture has `conditions: {}`).
func conditions(status map[string]any) []condition {
	list, _ := status["conditions"].([]any)
	out := make([]condition, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		out = append(out, condition{Type: s("type"), Status: s("status"), Reason: s("reason"), Message: s("message")})
	}
	return out
}

func hasCondition(cs []condition, typ, status string) bool {
	for _, c := range cs {
		if c.Type == typ && c.Status == status {
			return true
		}
	}
	return false
}

// number reads an int64 from a JSON number or a numeric string.
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		return i, err == nil
	}
	return 0, false
}

func reason(c condition) string {
	s := ""
	if c.Reason != "" {
		s = " (" + c.Reason + ")"
	}
	return s + suffix(c.Message)
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}
