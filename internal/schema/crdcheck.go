package schema

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubectl-gate/kubectl-gate/internal/apivalidation"
)

// CheckCRD refuses a CustomResourceDefinition the API server would refuse
// to create (apivalidation.ValidateCRD: x-kubernetes-validations rules that
// do not compile or exceed the CEL cost budget, a schema that is not
// structural, a name that is not plural.group, ...). A CRD given to the
// gate (--crd, schema.crds, a policy file) describes kinds the render is
// judged against; one the cluster would never hold must not be trusted to.
func CheckCRD(n *yaml.RNode) error {
	if n.YNode().Kind != yaml.MappingNode {
		return fmt.Errorf("a CustomResourceDefinition must be a mapping")
	}
	obj, dups := toUnstructured(n.YNode())
	m, _ := obj.(map[string]any)
	name := n.GetName()
	if len(dups) > 0 {
		return fmt.Errorf("CustomResourceDefinition %q: strict decoding error: duplicate field %q", name, dups[0])
	}
	if av := n.GetApiVersion(); !apivalidation.IsCRD(av, n.GetKind()) {
		return fmt.Errorf("CustomResourceDefinition %q: %s is not served (removed in Kubernetes 1.22); use apiextensions.k8s.io/v1", name, av)
	}
	verdict, _ := apivalidation.ValidateCRD(m)
	if verdict == nil {
		return nil
	}
	return fmt.Errorf("CustomResourceDefinition %q: the API server refuses it: %s", name, errorString(verdict))
}

// errorString renders a verdict as the API server's words: the decoding error,
// or each field error ("path: message"), joined by "; ".
func errorString(e *apivalidation.Error) string {
	if e.Decode != "" {
		return e.Decode
	}
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Error()
	}
	return strings.Join(parts, "; ")
}
