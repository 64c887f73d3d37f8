package policy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
)

// objectInterfaces gives the dispatcher what the API server's handler for
// custom resources gives it: every served version of a CRD is equivalent
// (for matchPolicy Equivalent), and an object is converted to the version a
// policy's rule names the way a CRD without a conversion webhook converts
// it, by changing its apiVersion. Built-in kinds keep the plain scheme: a
// policy on them matches their exact version only.
type objectInterfaces struct {
	admission.ObjectInterfaces
	kinds kinds
	equiv runtime.EquivalentResourceRegistry
}

func newObjectInterfaces(k kinds) *objectInterfaces {
	o := &objectInterfaces{
		ObjectInterfaces: admission.NewObjectInterfacesFromScheme(runtime.NewScheme()),
		kinds:            k,
		equiv:            runtime.NewEquivalentResourceRegistry(),
	}
	for gk, c := range k.crds {
		for _, v := range c.served {
			o.equiv.RegisterKindFor(schema.GroupVersionResource{Group: gk.Group, Version: v, Resource: c.plural}, "",
				gk.WithVersion(v))
		}
	}
	return o
}

func (o *objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o.equiv
}

func (o *objectInterfaces) GetObjectCreater() runtime.ObjectCreater { return o }

func (o *objectInterfaces) GetObjectConvertor() runtime.ObjectConvertor { return crConvertor{o} }

// New creates an empty custom resource of a served version.
func (o *objectInterfaces) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if !o.kinds.served(gvk) {
		return o.ObjectInterfaces.GetObjectCreater().New(gvk)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// crConvertor converts custom resources between served versions of a CRD
// whose conversion strategy is None.
type crConvertor struct{ o *objectInterfaces }

func (c crConvertor) Convert(in, out, ctx any) error {
	uin, okIn := in.(*unstructured.Unstructured)
	uout, okOut := out.(*unstructured.Unstructured)
	if !okIn || !okOut {
		return c.o.ObjectInterfaces.GetObjectConvertor().Convert(in, out, ctx)
	}
	from, to := uin.GroupVersionKind(), uout.GroupVersionKind()
	if from.GroupKind() != to.GroupKind() || !c.o.kinds.served(from) || !c.o.kinds.served(to) {
		return fmt.Errorf("convert %s to %s: not two served versions of one CustomResourceDefinition", from, to)
	}
	if c.o.kinds.crds[from.GroupKind()].webhookConversion {
		return fmt.Errorf("convert %s to %s: %w", from, to, errWebhookConversion)
	}
	uout.Object = uin.DeepCopy().Object
	uout.SetGroupVersionKind(to)
	return nil
}

func (c crConvertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	return c.o.ObjectInterfaces.GetObjectConvertor().ConvertToVersion(in, gv)
}

func (c crConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return c.o.ObjectInterfaces.GetObjectConvertor().ConvertFieldLabel(gvk, label, value)
}

// errWebhookConversion: only the CRD's conversion webhook can convert the
// object to the version a policy names.
var errWebhookConversion = fmt.Errorf("the CustomResourceDefinition converts through a webhook, which the gate cannot call")
