package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

const (
	fieldManager = "gate-test"
	// apiTimeout bounds one helper call, including waiting for a new CRD.
	apiTimeout = 60 * time.Second
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Apply creates or updates (server-side apply, forced) every object in the
// multi-document YAML, in order. Namespaced objects without a namespace go to
// "default"; objects with only generateName are created. After a CRD it
// waits for the CRD to be Established, and kinds the API does not know yet
// are retried until discovery serves them. It returns the objects as stored.
func (c *Cluster) Apply(t testing.TB, yamlDocs string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := decodeDocs(yamlDocs)
	if err != nil {
		t.Fatalf("cluster: apply: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		got, err := c.applyOne(ctx, obj)
		if err != nil {
			t.Fatalf("cluster: apply %s %q: %v", obj.GroupVersionKind(), obj.GetName(), err)
		}
		if got.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: crdGVR.Group, Kind: "CustomResourceDefinition"}) {
			if err := c.waitEstablished(ctx, got.GetName()); err != nil {
				t.Fatalf("cluster: apply: %v", err)
			}
		}
		out = append(out, got)
	}
	return out
}

// SetStatus replaces the .status of an object through its status
// subresource (statusYAML is the content of .status, not the whole object).
// It returns the object as stored.
func (c *Cluster) SetStatus(t testing.TB, apiVersion, kind, namespace, name, statusYAML string) *unstructured.Unstructured {
	t.Helper()
	var status map[string]any
	if err := yaml.Unmarshal([]byte(statusYAML), &status); err != nil {
		t.Fatalf("cluster: set status of %s %s/%s: parse status YAML: %v", kind, namespace, name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	r, err := c.resource(ctx, schema.FromAPIVersionAndKind(apiVersion, kind), namespace)
	if err != nil {
		t.Fatalf("cluster: set status of %s %s/%s: %v", kind, namespace, name, err)
	}
	var out *unstructured.Unstructured
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := r.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		obj.Object["status"] = status
		out, err = r.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: fieldManager})
		if err != nil {
			return fmt.Errorf("update status subresource: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("cluster: set status of %s %s/%s: %v", kind, namespace, name, err)
	}
	return out
}

// Get reads one object.
func (c *Cluster) Get(t testing.TB, apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	r, err := c.resource(ctx, schema.FromAPIVersionAndKind(apiVersion, kind), namespace)
	if err != nil {
		t.Fatalf("cluster: get %s %s/%s: %v", kind, namespace, name, err)
	}
	obj, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("cluster: get %s %s/%s: %v", kind, namespace, name, err)
	}
	return obj
}

func (c *Cluster) applyOne(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var got *unstructured.Unstructured
	err := c.retryDiscovery(ctx, func() error {
		r, err := c.resource(ctx, obj.GroupVersionKind(), obj.GetNamespace())
		if err != nil {
			return err
		}
		if obj.GetName() == "" {
			got, err = r.Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
		} else {
			got, err = r.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
		}
		return err
	})
	return got, err
}

// resource maps gvk to a client, namespaced ("default" if empty) or not.
func (c *Cluster) resource(ctx context.Context, gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, error) {
	var mapping *meta.RESTMapping
	err := c.retryDiscovery(ctx, func() (err error) {
		mapping, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("map kind %s to a resource: %w", gvk, err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return c.dyn.Resource(mapping.Resource), nil
	}
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	return c.dyn.Resource(mapping.Resource).Namespace(namespace), nil
}

// retryDiscovery retries fn while the API does not serve the kind yet (a CRD
// just created): "no matches for kind", or a 404 for the resource itself.
func (c *Cluster) retryDiscovery(ctx context.Context, fn func() error) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		last = fn()
		switch {
		case last == nil:
			return true, nil
		case meta.IsNoMatchError(last), isResourceNotFound(last):
			c.mapper.Reset()
			return false, nil
		}
		return false, last
	})
	if err != nil && last != nil && !errors.Is(err, last) {
		return fmt.Errorf("%w (gave up: %v)", last, err)
	}
	return err
}

// isResourceNotFound tells a 404 for a whole resource type (not served yet)
// from a 404 for a missing object or namespace, which has details.
func isResourceNotFound(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Name == ""
}

func (c *Cluster) waitEstablished(ctx context.Context, name string) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		crd, err := c.dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("get: %w", err)
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Established" {
				last = fmt.Sprintf("Established=%v: %v", m["status"], m["message"])
				return m["status"] == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("wait for CRD %s to be Established (%s): %w", name, last, err)
	}
	c.mapper.Reset()
	return nil
}

// decodeDocs splits multi-document YAML (or JSON) into objects, skipping
// empty documents.
func decodeDocs(docs string) ([]*unstructured.Unstructured, error) {
	reader := yaml.NewYAMLReader(bufio.NewReader(strings.NewReader(docs)))
	var objs []*unstructured.Unstructured
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read YAML document %d: %w", i, err)
		}
		js, err := yaml.ToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("convert YAML document %d to JSON: %w", i, err)
		}
		if js = bytes.TrimSpace(js); len(js) == 0 || string(js) == "null" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("decode YAML document %d: %w", i, err)
		}
		objs = append(objs, obj)
	}
}
