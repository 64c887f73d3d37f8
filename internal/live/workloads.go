package live

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// workloadKinds run pods the gate looks at, keyed "group/Kind". CronJobs
// are left out: their pods come and go on a schedule.
var workloadKinds = map[string]bool{
	"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true, "apps/ReplicaSet": true,
	"argoproj.io/Rollout": true, "batch/Job": true, "/Pod": true,
}

func isWorkload(r ManagedRef) bool { return workloadKinds[r.Group+"/"+r.Kind] }

// running returns the images the pods of the app's workloads run, each pod
// counted once even when two workloads select it.
func (s *Snapshot) running() []Running {
	var out []Running
	seen := map[string]bool{}
	for _, o := range s.Objects {
		if o.Live == nil || !isWorkload(o.Ref) {
			continue
		}
		for _, pod := range s.podsOf(o) {
			id := pod.GetNamespace() + "/" + pod.GetName()
			if seen[id] {
				continue
			}
			seen[id] = true
			for _, img := range podImages(pod) {
				out = addRunning(out, img, id, o.Ref)
			}
		}
	}
	return out
}

func addRunning(list []Running, img Running, pod string, w ManagedRef) []Running {
	for i := range list {
		if list[i].Ref == img.Ref && list[i].Digest == img.Digest {
			if n := len(list[i].Pods); n == 0 || list[i].Pods[n-1] != pod {
				list[i].Pods = append(list[i].Pods, pod)
			}
			return list
		}
	}
	img.Pods, img.Workload = []string{pod}, w
	return append(list, img)
}

// podsOf returns the live pods of a workload: the pod itself, or the pods
// its spec.selector selects (for a Rollout with a workloadRef and no
// selector of its own, the referenced Deployment's). Pods that have
// finished (Succeeded, Failed) run nothing.
func (s *Snapshot) podsOf(o Object) []*unstructured.Unstructured {
	if o.Ref.Kind == "Pod" {
		return []*unstructured.Unstructured{o.Live}
	}
	sel := s.selector(o.Live)
	var out []*unstructured.Unstructured
	for i := range s.Pods[o.Ref.Namespace] {
		pod := &s.Pods[o.Ref.Namespace][i]
		phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
		if phase == "Succeeded" || phase == "Failed" || !sel.Matches(labels.Set(pod.GetLabels())) {
			continue
		}
		out = append(out, pod)
	}
	return out
}

// selector parses a workload's spec.selector; a missing or bad selector
// selects nothing.
func (s *Snapshot) selector(obj *unstructured.Unstructured) labels.Selector {
	m, ok, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
	if !ok && obj.GetKind() == "Rollout" {
		if ref, _, _ := unstructured.NestedString(obj.Object, "spec", "workloadRef", "name"); ref != "" {
			if d := s.find("Deployment", obj.GetNamespace(), ref); d != nil {
				m, ok, _ = unstructured.NestedMap(d.Object, "spec", "selector")
			}
		}
	}
	if !ok || len(m) == 0 {
		return labels.Nothing()
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
		return labels.Nothing()
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return labels.Nothing()
	}
	return sel
}

// find returns a live managed object by kind, namespace and name.
func (s *Snapshot) find(kind, namespace, name string) *unstructured.Unstructured {
	for _, o := range s.Objects {
		if o.Live != nil && o.Ref.Kind == kind && o.Ref.Namespace == namespace && o.Ref.Name == name {
			return o.Live
		}
	}
	return nil
}
