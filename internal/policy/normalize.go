package policy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// normalize gives a built-in object the shape the API server's CEL sees:
// the API server decodes it into its Go type and back, which drops empty
// maps and lists of omitempty fields and canonicalizes quantities
// ("1024Mi" → "1Gi"). Custom kinds pass unchanged. An object that does not
// decode into its type is returned as an error: the API server would reject
// it before any policy ran. A Namespace gets the kubernetes.io/metadata.name
// label the API server sets on create, before admission sees it.
func normalize(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := u.GroupVersionKind()
	if gvk.Group == "" && gvk.Version == "v1" && gvk.Kind == "Namespace" {
		labels := u.GetLabels()
		if labels[nsNameLabel] != u.GetName() {
			u = u.DeepCopy()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[nsNameLabel] = u.GetName()
			u.SetLabels(labels)
		}
	}
	if !scheme.Scheme.Recognizes(gvk) {
		return u, nil
	}
	typed, err := scheme.Scheme.New(gvk)
	if err != nil {
		return u, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, typed, false); err != nil {
		return nil, fmt.Errorf("decode %s %s %q: %w", u.GetAPIVersion(), u.GetKind(), u.GetName(), err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s %q: %w", u.GetAPIVersion(), u.GetKind(), u.GetName(), err)
	}
	out := &unstructured.Unstructured{Object: m}
	out.SetGroupVersionKind(gvk)
	return out, nil
}
