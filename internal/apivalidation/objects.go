package apivalidation

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kindObjects hands out the two top-level objects Validate fills for one
// kind, its versioned and its internal type, zero, and takes them back
// after an accepted object: a render has thousands of objects of the same
// few kinds, and each top-level struct of a workload is over a kilobyte,
// which the stage would otherwise allocate twice per object for the
// garbage collector to scan and free.
//
// Only the top-level structs are reused, zeroed when they are put back
// (so a pooled object holds nothing of the last one): everything below
// them (slices, maps, pointers) is allocated anew by each decoding and
// conversion. They are put back only when the kind's validation accepted
// the object, so no field error, whose BadValue may point into them,
// outlives them.
type kindObjects struct {
	versioned, internal sync.Pool
	// target and internalKind are what Scheme.UnsafeConvertToVersion
	// computes for the versioned type: the internal version of its group
	// as the conversion's context, and the kind it converts to.
	target       schema.GroupVersion
	internalKind schema.GroupVersionKind
}

var objectsByKind sync.Map // schema.GroupVersionKind → *kindObjects

// objectsOf returns the pools of one versioned kind, or nil when the
// scheme cannot name its internal kind the way the conversion would (the
// caller then takes Scheme.New and UnsafeConvertToVersion).
func objectsOf(scheme *runtime.Scheme, gvk schema.GroupVersionKind) *kindObjects {
	if o, ok := objectsByKind.Load(gvk); ok {
		return o.(*kindObjects)
	}
	o := newKindObjects(scheme, gvk)
	actual, _ := objectsByKind.LoadOrStore(gvk, o)
	return actual.(*kindObjects)
}

func newKindObjects(scheme *runtime.Scheme, gvk schema.GroupVersionKind) *kindObjects {
	probe, err := scheme.New(gvk)
	if err != nil {
		return nil
	}
	kinds, unversioned, err := scheme.ObjectKinds(probe)
	if err != nil || unversioned {
		return nil
	}
	target := schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal}
	// The choice convertToVersion makes from the type's kinds.
	internalKind, ok := target.KindForGroupVersionKinds(kinds)
	if !ok {
		return nil
	}
	for _, k := range kinds {
		if k == internalKind {
			return nil // registered as its own internal kind: no conversion
		}
	}
	if _, err := scheme.New(internalKind); err != nil {
		return nil
	}
	o := &kindObjects{target: target, internalKind: internalKind}
	o.versioned.New = func() any {
		obj, _ := scheme.New(gvk)
		return obj
	}
	o.internal.New = func() any {
		obj, _ := scheme.New(internalKind)
		return obj
	}
	return o
}

// convert is scheme.UnsafeConvertToVersion(in, o.target) into a pooled
// internal object: the same conversion call with the same context, and the
// kind set as convertToVersion sets it for the internal version (empty).
func (o *kindObjects) convert(scheme *runtime.Scheme, in runtime.Object) (runtime.Object, error) {
	out := o.internal.Get().(runtime.Object)
	if err := scheme.Convert(in, out, o.target); err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out, nil
}

// release zeroes both objects and puts them back.
func (o *kindObjects) release(versioned, internal runtime.Object) {
	reflect.ValueOf(versioned).Elem().SetZero()
	reflect.ValueOf(internal).Elem().SetZero()
	o.versioned.Put(versioned)
	o.internal.Put(internal)
}
